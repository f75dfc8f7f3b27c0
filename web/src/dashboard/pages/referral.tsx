// /app/referrals/:id: the referral (ReferralDetail of ./referrals.tsx) and, below it, "Why did this referral
// not convert?": the provider subscriptions and checkouts seen for the referred user's email (or naming this
// referral) that did not attribute, each with why (GET /v1/referrals/{id}/diagnosis/,
// docs/referrals-diagnosis.md), and "Convert with subscription…", which calls the conversion endpoint and
// shows its field errors in the form.
import { useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso';
import { api } from '../api';
import { idempotencyKey, unwrap } from '../../api/client';
import { Badge } from '../../ui/badge';
import { Field, Form, SubmitButton, intOrText, text, textOrNull, useFormState } from '../../ui/form';
import { LoadState, Section, useLoad } from '../components/page';
import { useToast } from '../../ui/toast';
import { formatTime } from '../../ui/format';
import { useCan } from '../lib/session';
import { ReferralDetail } from './referrals';

type Diagnosis = Awaited<ReturnType<typeof loadDiagnosis>>;
type Entry = Diagnosis['unattributed'][number];

const REASONS: Record<string, string> = {
  no_referral_hint: 'No referral in the checkout',
  unknown_coupon: 'Not a referral coupon',
  malformed_referral_id: 'Not a referral id',
  referral_not_found: 'Referral not found',
  referral_converted_elsewhere: 'Referral already converted',
  subscription_assigned: 'Assigned to another referral',
  self_referral: 'Self-referral',
  conversion_refused: 'Conversion refused',
};

function loadDiagnosis(id: string, email: string | null) {
  return unwrap(api.GET('/v1/referrals/{id}/diagnosis/', { params: { path: { id }, query: email ? { email } : {} } }));
}

export function ReferralPage() {
  const { params } = useRoute();
  const id = params.id ?? '';
  // A conversion remounts the referral's own view (its status, subscription and rewards are read again).
  const [version, setVersion] = useState(0);
  return (
    <>
      <ReferralDetail key={`${id}-${version}`} />
      <WhyNotConverted id={id} onConverted={() => setVersion((n) => n + 1)} />
    </>
  );
}

function WhyNotConverted({ id, onConverted }: { id: string; onConverted: () => void }) {
  const canManage = useCan('manage');
  const notify = useToast();
  const email = useRef<string | null>(null);
  const loaded = useLoad(() => loadDiagnosis(id, email.current), [id]);
  const emailForm = useFormState();
  const convertForm = useFormState();
  // "Use" on a row fills the form (remounted with the row's ids as defaults).
  const [prefill, setPrefill] = useState<{ subscription: string; checkout: string; n: number }>({ subscription: '', checkout: '', n: 0 });
  const convertRef = useRef<HTMLDivElement>(null);

  const use = (e: Entry) => {
    setPrefill((p) => ({ subscription: String(e.subscription_id), checkout: '', n: p.n + 1 }));
    convertForm.setProblem(null);
    requestAnimationFrame(() => convertRef.current?.querySelector<HTMLInputElement>('input[name="subscription_id"]')?.focus());
  };

  return (
    <LoadState loaded={loaded} what="why the referral did not convert">
      {(d) => (
        <>
          <Section
            id="referral-diagnosis"
            // A converted referral keeps the section (other checkouts of the same customer) under a title that fits it.
            title={d.is_converted ? 'Other checkouts of this customer' : 'Why did this referral not convert?'}
            description={
              <>
                Subscriptions and checkouts the payment provider reported in the last 90 days that did not convert this referral: those of
                the referred user's email
                {d.email ? (
                  <>
                    {' '}
                    (<code>{d.email}</code>
                    {d.email_source === 'user_identifier' ? ', the referred user' : ''})
                  </>
                ) : null}{' '}
                and those whose checkout named this referral.
              </>
            }
          >
            {d.email_source !== 'query' && d.email === null && (
              <p class="hint">
                The referred user&rsquo;s identifier is not an email address: enter the email they paid with to find their checkouts.
              </p>
            )}
            <Form
              form={emailForm}
              labelledBy="referral-diagnosis-email-title"
              class="form form-inline"
              onSubmit={async (data) => {
                const given = textOrNull(data, 'email');
                const found = await loadDiagnosis(id, given);
                email.current = given;
                loaded.setData(found);
              }}
            >
              <h3 id="referral-diagnosis-email-title" class="sr-only">
                Look up by email
              </h3>
              <div class="form-grid">
                <Field
                  name="email"
                  type="email"
                  label="Customer's email at the provider"
                  hint="Compared without case."
                  optional
                  autoComplete="off"
                  spellcheck={false}
                  defaultValue={d.email ?? ''}
                />
              </div>
              <div class="form-actions">
                <SubmitButton form={emailForm} variant="secondary" busyLabel="Looking…">
                  Look up
                </SubmitButton>
              </div>
            </Form>
            {d.unattributed.length === 0 ? (
              <div class="empty empty-inline">
                <p>
                  {d.is_converted
                    ? 'Nothing else was seen: the referral is converted.'
                    : 'No checkout or subscription was seen that did not attribute. If the customer paid with another email address, enter it above.'}
                </p>
              </div>
            ) : (
              <div class="table-wrap">
                <table class="table">
                  <caption class="sr-only">Subscriptions that did not convert this referral</caption>
                  <thead>
                    <tr>
                      <th scope="col">Last seen</th>
                      <th scope="col">Subscription</th>
                      <th scope="col">Checkout</th>
                      <th scope="col">Email</th>
                      <th scope="col">Why</th>
                      {canManage && !d.is_converted && <th scope="col">Action</th>}
                    </tr>
                  </thead>
                  <tbody>
                    {d.unattributed.map((e) => (
                      <tr key={String(e.subscription_id)}>
                        <td>{formatTime(e.last_seen_at)}</td>
                        <td>
                          <code class="mono-small">{String(e.subscription_id)}</code> {e.status && <Badge status={e.status} />}{' '}
                          {e.plan_name ?? ''}
                        </td>
                        <td>{e.checkout_id ? <code class="mono-small">{e.checkout_id}</code> : '—'}</td>
                        <td>{e.email}</td>
                        <td>
                          <strong>{REASONS[e.reason] ?? e.reason}</strong>
                          <br />
                          <span class="hint">{e.detail}</span>
                        </td>
                        {canManage && !d.is_converted && (
                          <td>
                            {e.assigned_referral_id === null ? (
                              <button
                                type="button"
                                class="btn btn-secondary btn-small"
                                onClick={() => use(e)}
                                aria-label={`Use subscription ${String(e.subscription_id)}`}
                              >
                                Use
                              </button>
                            ) : (
                              <a href={`/app/referrals/${encodeURIComponent(e.assigned_referral_id)}`}>Its referral</a>
                            )}
                          </td>
                        )}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </Section>
          {canManage && !d.is_converted && (
            <div ref={convertRef}>
              <Section
                id="referral-convert"
                title="Convert with subscription…"
                description="Records the conversion as your backend would (POST /v1/referrals/{id}/conversion/): give the provider's subscription id, or the checkout id. Rewards follow the customer's payments."
              >
                <Form
                  key={prefill.n}
                  form={convertForm}
                  labelledBy="referral-convert-title"
                  onSubmit={async (data) => {
                    const subscription = intOrText(data, 'subscription_id');
                    const checkout = text(data, 'checkout_id');
                    const body = {
                      ...(subscription !== null ? { subscription_id: subscription } : {}),
                      ...(checkout ? { checkout_id: checkout } : {}),
                    };
                    const converted = await unwrap(
                      api.POST('/v1/referrals/{id}/conversion/', {
                        params: { path: { id }, header: { 'Idempotency-Key': idempotencyKey() } },
                        body,
                      }),
                    );
                    notify(
                      `Referral of ${converted.user_identifier} converted with subscription ${String(converted.subscription?.id ?? '')}.`,
                    );
                    onConverted();
                    loaded.reload();
                  }}
                >
                  <div class="form-grid">
                    <Field
                      name="subscription_id"
                      label="Subscription id"
                      hint="Paddle Classic: a number; Paddle Billing and Stripe: sub_…"
                      optional
                      autoComplete="off"
                      spellcheck={false}
                      defaultValue={prefill.subscription}
                    />
                    <Field
                      name="checkout_id"
                      label="Checkout id"
                      hint="Instead of the subscription: Paddle's checkout or txn_…, Stripe's cs_…"
                      optional
                      autoComplete="off"
                      spellcheck={false}
                      defaultValue={prefill.checkout}
                    />
                  </div>
                  <div class="form-actions">
                    <SubmitButton form={convertForm} busyLabel="Converting…">
                      Convert referral
                    </SubmitButton>
                  </div>
                </Form>
              </Section>
            </div>
          )}
        </>
      )}
    </LoadState>
  );
}
