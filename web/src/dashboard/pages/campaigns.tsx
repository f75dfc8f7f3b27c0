// /app/campaigns (list, the plan's limit), /app/campaigns/new (create) and /app/campaigns/:id (edit with
// PATCH, delete). A campaign holds the reward terms: credit or commission (fixed or a percentage), the
// threshold, the hold and approval before payout, the minimum payout, and the referred user's discount.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { lazy, useLocation, useRoute } from 'preact-iso';
import { api } from '../api';
import { idempotencyKey, unwrap, type ApiPaths } from '../../api/client';
import { BusyButton } from '../../ui/busy-button';
import { CheckField, Field, Form, SelectField, SubmitButton, checked, intOrText, text, textOrUndefined, useFormState } from '../../ui/form';
import { PagedTable } from '../components/paged-table';
import { LoadState, PageHeader, Section, useLoad } from '../components/page';
import { useToast } from '../../ui/toast';
import { useDeleteFlow } from '../lib/actions';
import { formatMoney, formatTime, titleCase } from '../../ui/format';
import { useCan } from '../lib/session';
import type { Campaign } from '../../api/types';
import { campaignHref } from '../lib/links';
import { Badge } from '../../ui/badge';
import { initialSignup, questionsOf, type SignupState } from './campaign-signup-state';

// The sign-up page's editor is only on a campaign's form: loaded with it.
const SignupSection = lazy(() => import('./campaign-signup').then((m) => m.SignupSection));

type CampaignBody = ApiPaths['/v1/campaigns/']['post']['requestBody']['content']['application/json'];

export function rewardSummary(c: Campaign): string {
  const period =
    c.commission_months === null
      ? 'for the life of the subscription'
      : `for ${c.commission_months} month${c.commission_months === 1 ? '' : 's'}`;
  if (c.allows_credit) return `Credit of ${formatMoney(c.credit_amount, c.credit_currency)}`;
  if (c.allows_commission) {
    return c.commission_type === 'percentage'
      ? `${c.commission_percent}% of each payment, ${period}`
      : `${formatMoney(c.commission_amount, c.commission_currency)} per payment, ${period}`;
  }
  return 'No reward';
}

function discountSummary(c: Campaign): string {
  if (!c.referred_discount_type) return 'None';
  const amount =
    c.referred_discount_type === 'percentage'
      ? `${c.referred_discount_amount}%`
      : formatMoney(c.referred_discount_amount, c.allows_credit ? c.credit_currency : c.commission_currency);
  return `${amount} off${c.referred_discount_recurring ? ', every payment' : ', first payment'}`;
}

function PlanLimit({ used }: { used: number | null }) {
  const account = useLoad(() => unwrap(api.GET('/v1/account/')), []);
  const plan = account.data?.plan;
  if (!plan || used === null) return null;
  // The plan's limit as the API states it (GET /v1/account/ campaign_limit; null = no limit).
  const limit = account.data?.campaign_limit ?? null;
  const name = titleCase(plan);
  if (limit === null) return <p class="plan-limit">Your {name} plan has no campaign limit.</p>;
  const full = used >= limit;
  return (
    <p class={full ? 'plan-limit is-full' : 'plan-limit'}>
      Your {name} plan allows {limit} campaign{limit === 1 ? '' : 's'}; {used} in use.{full && ' Upgrade to add more.'}
    </p>
  );
}

export function Campaigns() {
  const canManage = useCan('manage');
  const [count, setCount] = useState<number | null>(null);
  return (
    <>
      <PageHeader title="Campaigns" subtitle="The reward terms your members refer under.">
        {canManage && (
          <a class="btn btn-primary" href="/app/campaigns/new">
            New campaign
          </a>
        )}
      </PageHeader>
      <PlanLimit used={count} />
      <Section id="campaign-list" title="All campaigns">
        <PagedTable<Campaign>
          label="Campaigns"
          noun={['campaign', 'campaigns']}
          load={(q) => unwrap(api.GET('/v1/campaigns/', { params: { query: q } }))}
          onLoaded={(page) => setCount(page.count)}
          rowKey={(c) => c.id}
          empty={
            <p>
              No campaigns yet. {canManage ? <a href="/app/campaigns/new">Create one</a> : 'An owner or admin can create one'} to set what
              members earn, then assign members to it.
            </p>
          }
          columns={[
            { key: 'name', header: 'Name', cell: (c) => <a href={campaignHref(c.id)}>{c.name}</a> },
            { key: 'reward', header: 'Reward', cell: rewardSummary },
            {
              key: 'threshold',
              header: 'Threshold',
              numeric: true,
              cell: (c) => formatMoney(c.reward_threshold, c.allows_credit ? c.credit_currency : c.commission_currency),
            },
            {
              key: 'hold',
              header: 'Hold',
              numeric: true,
              cell: (c) => (c.allows_commission && !c.allows_credit ? `${c.hold_days} d` : '—'),
            },
            { key: 'approval', header: 'Approval', cell: (c) => (c.allows_commission && !c.allows_credit ? titleCase(c.approval) : '—') },
            {
              key: 'min',
              header: 'Min. payout',
              numeric: true,
              cell: (c) => (c.allows_commission && !c.allows_credit ? formatMoney(c.min_payout, c.commission_currency) : '—'),
            },
            { key: 'discount', header: 'Referred discount', cell: discountSummary },
            {
              key: 'signup',
              header: 'Sign-up page',
              cell: (c) => (c.signup.enabled ? <Badge status="active" label="Open" /> : '—'),
            },
            { key: 'created', header: 'Created', cell: (c) => formatTime(c.created_at) },
          ]}
        />
      </Section>
    </>
  );
}

type RewardKind = 'none' | 'credit' | 'commission';

function Group({ legend, children, description }: { legend: string; children: ComponentChildren; description?: string }) {
  return (
    <fieldset class="fieldset">
      <legend class="legend">{legend}</legend>
      {description && <p class="hint">{description}</p>}
      <div class="form-grid">{children}</div>
    </fieldset>
  );
}

/** The body from the form: the chosen reward's fields only (the others keep their stored values). */
function campaignBody(data: FormData, kind: RewardKind, commissionType: string, discountType: string, signup: SignupState): CampaignBody {
  const body: CampaignBody = { name: text(data, 'name'), allows_credit: kind === 'credit', allows_commission: kind === 'commission' };
  body.slug = textOrUndefined(data, 'slug');
  body.signup = { ...signup.signup, questions: questionsOf(signup.rows) };
  if (kind !== 'none') body.reward_threshold = text(data, 'reward_threshold') || '0';
  if (kind === 'credit') {
    body.credit_amount = text(data, 'credit_amount');
    body.credit_currency = text(data, 'credit_currency');
  }
  if (kind === 'commission') {
    body.commission_type = commissionType === 'percentage' ? 'percentage' : 'fixed';
    if (commissionType === 'percentage') body.commission_percent = text(data, 'commission_percent');
    else body.commission_amount = text(data, 'commission_amount');
    body.commission_currency = text(data, 'commission_currency');
    body.commission_months = intOrText(data, 'commission_months') as number | null;
    body.hold_days = intOrText(data, 'hold_days') as number;
    body.approval = text(data, 'approval') === 'manual' ? 'manual' : 'auto';
    body.min_payout = text(data, 'min_payout') || '0';
  }
  body.referred_discount_type = discountType === '' ? null : discountType;
  if (discountType !== '') {
    body.referred_discount_amount = text(data, 'referred_discount_amount');
    body.referred_discount_recurring = checked(data, 'referred_discount_recurring');
  }
  return body;
}

function CampaignForm({
  campaign,
  submitLabel,
  busyLabel,
  onSubmit,
  readOnly,
}: {
  campaign: Campaign | null;
  submitLabel: string;
  busyLabel: string;
  onSubmit: (body: CampaignBody) => Promise<void>;
  readOnly: boolean;
}) {
  const form = useFormState();
  const [kind, setKind] = useState<RewardKind>(
    campaign ? (campaign.allows_credit ? 'credit' : campaign.allows_commission ? 'commission' : 'none') : 'commission',
  );
  const [commissionType, setCommissionType] = useState<string>(campaign?.commission_type ?? 'fixed');
  const [discountType, setDiscountType] = useState<string>(campaign?.referred_discount_type ?? '');
  const c = campaign;
  const [signup, setSignup] = useState<SignupState>(() => initialSignup(c?.signup));
  // The account's slug: the first half of the sign-up page's address.
  const account = useLoad(() => unwrap(api.GET('/v1/account/')), []);
  const accountSlug = account.data?.slug;

  return (
    <Form form={form} onSubmit={(data) => onSubmit(campaignBody(data, kind, commissionType, discountType, signup))}>
      <fieldset class="fieldset-plain" disabled={readOnly}>
        <div class="form-grid">
          <Field name="name" label="Name" defaultValue={c?.name ?? ''} required maxLength={100} autoComplete="off" />
          <SelectField
            name="reward_kind"
            label="The referrer earns"
            value={kind}
            onChange={(v) => setKind(v as RewardKind)}
            options={[
              { value: 'commission', label: 'A commission (paid out)' },
              { value: 'credit', label: 'A credit on their subscription' },
              { value: 'none', label: 'Nothing' },
            ]}
          />
        </div>

        {kind === 'credit' && (
          <Group legend="Credit" description="Applied once to the referrer's own subscription at your payment provider.">
            <Field name="credit_amount" label="Amount" inputMode="decimal" defaultValue={c?.credit_amount ?? '5.00'} />
            <Field name="credit_currency" label="Currency" defaultValue={c?.credit_currency ?? 'USD'} maxLength={3} class="input-short" />
            <Field
              name="reward_threshold"
              label="Threshold"
              inputMode="decimal"
              hint="Paid by the referred customer before the credit is earned."
              defaultValue={c?.reward_threshold ?? '0.00'}
            />
          </Group>
        )}

        {kind === 'commission' && (
          <>
            <Group legend="Commission">
              <SelectField
                name="commission_type"
                label="Commission type"
                value={commissionType}
                onChange={setCommissionType}
                options={[
                  { value: 'fixed', label: 'Fixed amount per payment' },
                  { value: 'percentage', label: 'Percentage of each payment' },
                ]}
              />
              {commissionType === 'percentage' ? (
                <Field
                  name="commission_percent"
                  label="Percent"
                  inputMode="decimal"
                  hint="0.01 to 100, of each payment excluding tax."
                  defaultValue={c && Number(c.commission_percent) > 0 ? c.commission_percent : '20'}
                />
              ) : (
                <Field
                  name="commission_amount"
                  label="Amount per payment"
                  inputMode="decimal"
                  defaultValue={c?.commission_amount ?? '10.00'}
                />
              )}
              <Field
                name="commission_currency"
                label="Currency"
                defaultValue={c?.commission_currency ?? 'USD'}
                maxLength={3}
                class="input-short"
              />
              <Field
                name="commission_months"
                label="For how many months"
                optional
                inputMode="numeric"
                hint="Empty: for the life of the subscription."
                defaultValue={c?.commission_months === null || c === null ? '' : String(c.commission_months)}
              />
              <Field
                name="reward_threshold"
                label="Threshold"
                inputMode="decimal"
                hint="Paid by the referred customer before commissions start."
                defaultValue={c?.reward_threshold ?? '0.00'}
              />
            </Group>
            <Group legend="Payout terms">
              <Field
                name="hold_days"
                label="Hold (days)"
                inputMode="numeric"
                hint="Pending for this long (refund window), 0 to 365."
                defaultValue={String(c?.hold_days ?? 30)}
              />
              <SelectField
                name="approval"
                label="Approval"
                defaultValue={c?.approval ?? 'auto'}
                options={[
                  { value: 'auto', label: 'Automatic after the hold' },
                  { value: 'manual', label: 'Manual (approve each reward)' },
                ]}
              />
              <Field
                name="min_payout"
                label="Minimum payout"
                inputMode="decimal"
                hint="A member's payout is due once it reaches this."
                defaultValue={c?.min_payout ?? '0.00'}
              />
            </Group>
          </>
        )}

        <Group legend="Discount for the referred user">
          <SelectField
            name="referred_discount_type"
            label="Discount"
            value={discountType}
            onChange={setDiscountType}
            options={[
              { value: '', label: 'No discount' },
              { value: 'percentage', label: 'Percentage off' },
              { value: 'flat', label: 'Fixed amount off' },
            ]}
          />
          {discountType !== '' && (
            <>
              <Field
                name="referred_discount_amount"
                label={discountType === 'percentage' ? 'Percent off' : 'Amount off'}
                inputMode="decimal"
                defaultValue={c?.referred_discount_amount ?? '10'}
              />
              <CheckField
                name="referred_discount_recurring"
                label="On every payment (not only the first)"
                defaultChecked={c?.referred_discount_recurring ?? false}
              />
            </>
          )}
        </Group>

        <SignupSection state={signup} onChange={setSignup} campaignSlug={c?.slug} accountSlug={accountSlug} />
      </fieldset>
      {!readOnly && (
        <div class="form-actions">
          <SubmitButton form={form} busyLabel={busyLabel}>
            {submitLabel}
          </SubmitButton>
          <a class="btn btn-ghost" href="/app/campaigns">
            Cancel
          </a>
        </div>
      )}
    </Form>
  );
}

export function CampaignNew() {
  const { route } = useLocation();
  const notify = useToast();
  const canManage = useCan('manage');
  return (
    <>
      <PageHeader title="New campaign" back={{ href: '/app/campaigns', label: 'Campaigns' }} />
      <PlanLimitFromList />
      <Section id="campaign-form" title="Terms">
        {canManage ? (
          <CampaignForm
            campaign={null}
            readOnly={false}
            submitLabel="Create campaign"
            busyLabel="Creating…"
            onSubmit={async (body) => {
              const created = await unwrap(
                api.POST('/v1/campaigns/', { params: { header: { 'Idempotency-Key': idempotencyKey() } }, body }),
              );
              notify(`Campaign ${created.name} created.`);
              route(campaignHref(created.id));
            }}
          />
        ) : (
          <p>Only an owner or admin can create campaigns.</p>
        )}
      </Section>
    </>
  );
}

function PlanLimitFromList() {
  const list = useLoad(() => unwrap(api.GET('/v1/campaigns/', { params: { query: { page_size: 1 } } })), []);
  return <PlanLimit used={list.data?.count ?? null} />;
}

export function CampaignEdit() {
  const { params } = useRoute();
  const id = params.id ?? '';
  const canManage = useCan('manage');
  const notify = useToast();
  const loaded = useLoad(() => unwrap(api.GET('/v1/campaigns/{id}/', { params: { path: { id } } })), [id]);
  const campaign = loaded.data;

  const { deleting, remove } = useDeleteFlow(
    campaign && {
      confirm: {
        title: `Delete campaign ${campaign.name}?`,
        body: (
          <p>Its members are left without a campaign; existing referrals keep the terms they were created with. This cannot be undone.</p>
        ),
        confirmLabel: 'Delete campaign',
        danger: true,
      },
      remove: () =>
        unwrap(
          api.DELETE('/v1/campaigns/{id}/', { params: { path: { id: campaign.id }, header: { 'Idempotency-Key': idempotencyKey() } } }),
        ),
      done: `Campaign ${campaign.name} deleted.`,
      failed: 'The campaign could not be deleted.',
      back: '/app/campaigns',
    },
  );

  return (
    <>
      <PageHeader
        title={campaign ? campaign.name : 'Campaign'}
        subtitle={campaign ? rewardSummary(campaign) : undefined}
        back={{ href: '/app/campaigns', label: 'Campaigns' }}
      >
        {campaign && (
          <>
            <a class="btn btn-secondary" href={`/app/members?campaign=${encodeURIComponent(campaign.id)}`}>
              Members
            </a>
            {campaign.signup.enabled && (
              <a class="btn btn-secondary" href={`/app/applications?campaign=${encodeURIComponent(campaign.id)}`}>
                Applications
              </a>
            )}
            {canManage && (
              <BusyButton variant="danger" busy={deleting} busyLabel="Deleting…" onClick={remove}>
                Delete campaign
              </BusyButton>
            )}
          </>
        )}
      </PageHeader>
      <LoadState loaded={loaded} what="the campaign">
        {(c) => (
          <Section
            id="campaign-form"
            title="Terms"
            description={`Created ${formatTime(c.created_at)}. Changes apply to new referrals; existing ones keep their terms.`}
          >
            <CampaignForm
              key={c.id}
              campaign={c}
              readOnly={!canManage}
              submitLabel="Save changes"
              busyLabel="Saving…"
              onSubmit={async (body) => {
                const saved = await unwrap(
                  api.PATCH('/v1/campaigns/{id}/', {
                    params: { path: { id: c.id }, header: { 'Idempotency-Key': idempotencyKey() } },
                    body,
                  }),
                );
                loaded.setData(saved);
                notify(`Campaign ${saved.name} saved.`);
              }}
            />
          </Section>
        )}
      </LoadState>
    </>
  );
}
