// Settings > Affiliate programme: the account's slug (its public pages' addresses), the attribution model
// and window, whether affiliates must give tax details, the optional emails to affiliates, and the look of
// the public sign-up page and the hosted portal (colours with a live preview). Owner or admin edit.
import { useId, useState } from 'preact/hooks';
import type { Account } from '../../../api/types';
import { Field, Form, SubmitButton, intOrText, text, useFieldErrors, useFormState } from '../../../ui/form';
import { useToast } from '../../../ui/toast';
import { Details, LoadState, Section, type Loaded } from '../../components/page';
import type { AttributionModel, Theme } from '../../lib/affiliates';
import { useCan } from '../../lib/session';
import { type AccountPatch, patchAccount } from './account-api';

/** The portal's own colours (ui/tokens.css): what a theme without a value shows. */
const DEFAULTS = { accent: '#4f46e5', background: '#f6f7f9', text: '#111827' } as const;
const COLOURS: { key: keyof typeof DEFAULTS; label: string }[] = [
  { key: 'accent', label: 'Accent (buttons, links)' },
  { key: 'background', label: 'Page background' },
  { key: 'text', label: 'Text' },
];

const MODELS: { value: AttributionModel; label: string }[] = [
  { value: 'first_click', label: 'First click: the first link a visitor followed keeps the credit' },
  { value: 'last_click', label: 'Last click: the latest link followed takes the credit' },
];

/** A switch: a checkbox with the switch role (on/off read out), its label beside it. */
function Switch({ name, label, hint, defaultChecked }: { name: string; label: string; hint?: string; defaultChecked: boolean }) {
  const id = useId();
  const [on, setOn] = useState(defaultChecked);
  return (
    <div class="field field-check">
      <input
        type="checkbox"
        role="switch"
        aria-checked={on}
        id={id}
        name={name}
        class="check"
        checked={on}
        onChange={(e) => setOn(e.currentTarget.checked)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      <label class="label-inline" for={id}>
        {label}
      </label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
    </div>
  );
}

function FieldErrorsOf({ name }: { name: string }) {
  const errors = useFieldErrors(name);
  return errors.length > 0 ? <p class="field-error">{errors.join(' ')}</p> : null;
}

export function ProgrammeSection({ account }: { account: Loaded<Account> }) {
  return (
    <Section
      id="programme"
      title="Affiliate programme"
      description="Your programme's public pages, how a referral is credited to a link, and what affiliates are asked and sent."
    >
      <LoadState loaded={account} what="the programme settings">
        {(a) => <ProgrammeForm key={a.id} account={a} onSaved={account.setData} />}
      </LoadState>
    </Section>
  );
}

function ProgrammeForm({ account: a, onSaved }: { account: Account; onSaved: (a: Account) => void }) {
  const canEdit = useCan('account');
  const notify = useToast();
  const form = useFormState();
  const id = useId();
  const [theme, setTheme] = useState<Theme>(a.theme ?? {});
  const emails = a.affiliate_emails ?? { new_referral: false, monthly_summary: false };
  const radius = Number.parseInt(theme.radius ?? '', 10);

  if (!canEdit) {
    return (
      <Details
        items={[
          ['Slug', a.slug ? <code>{a.slug}</code> : 'Not set'],
          [
            'Attribution',
            `${MODELS.find((m) => m.value === (a.attribution_model ?? 'first_click'))?.label}, ${a.attribution_days ?? 60} days`,
          ],
          ['Tax details', a.tax_details_required ? 'Required before payouts' : 'Not asked'],
          ['New referral emails', emails.new_referral ? 'On' : 'Off'],
          ['Monthly summary emails', emails.monthly_summary ? 'On' : 'Off'],
        ]}
      />
    );
  }

  return (
    <Form
      form={form}
      labelledBy="programme-title"
      onSubmit={async (data) => {
        const body: AccountPatch = {
          slug: text(data, 'slug') || undefined,
          attribution_model: text(data, 'attribution_model') === 'last_click' ? 'last_click' : 'first_click',
          attribution_days: intOrText(data, 'attribution_days') as number,
          tax_details_required: data.get('tax_details_required') !== null,
          affiliate_emails: {
            new_referral: data.get('new_referral') !== null,
            monthly_summary: data.get('monthly_summary') !== null,
          },
          theme,
        };
        const saved = await patchAccount(body);
        onSaved(saved);
        notify('Affiliate programme settings saved.');
      }}
    >
      <div class="form-grid">
        <Field
          name="slug"
          label="Account slug"
          defaultValue={a.slug ?? ''}
          maxLength={40}
          autoComplete="off"
          spellcheck={false}
          hint={`In your public pages' addresses: /join/${a.slug || '<slug>'}/<campaign>/ and /portal/${a.slug || '<slug>'}/login.`}
        />
      </div>

      <fieldset class="fieldset">
        <legend class="legend">Attribution</legend>
        <p class="hint" id={`${id}-attribution`}>
          With first click, the first member whose link a visitor followed gets the referral; with last click, the latest one does. The
          browser script keeps the link for the window below, but Safari caps cookies written by scripts at 7 days, so create referrals from
          your backend for longer windows there.
        </p>
        <div class="form-grid">
          <div class="field">
            <label class="label" for={`${id}-model`}>
              Model
            </label>
            <select id={`${id}-model`} name="attribution_model" class="input" aria-describedby={`${id}-attribution`}>
              {MODELS.map((m) => (
                <option key={m.value} value={m.value} selected={m.value === (a.attribution_model ?? 'first_click')}>
                  {m.label}
                </option>
              ))}
            </select>
            <FieldErrorsOf name="attribution_model" />
          </div>
          <Field
            name="attribution_days"
            label="Window (days)"
            type="number"
            min={1}
            max={365}
            inputMode="numeric"
            defaultValue={String(a.attribution_days ?? 60)}
            hint="1 to 365; 60 by default."
            class="input-short"
          />
        </div>
      </fieldset>

      <fieldset class="fieldset">
        <legend class="legend">Affiliates</legend>
        <Switch
          name="tax_details_required"
          label="Require tax details before payouts"
          hint="Affiliates give them in their portal (stored encrypted, shown masked); a payout waits until they do."
          defaultChecked={a.tax_details_required === true}
        />
        <FieldErrorsOf name="tax_details_required" />
        <Switch
          name="new_referral"
          label="Email affiliates about each new referral"
          hint="Off by default. Every such email has an unsubscribe link."
          defaultChecked={emails.new_referral}
        />
        <Switch
          name="monthly_summary"
          label="Email affiliates a monthly summary"
          hint="Last month's clicks, referrals, conversions and earnings, on the 1st."
          defaultChecked={emails.monthly_summary}
        />
        <FieldErrorsOf name="affiliate_emails" />
        <p class="hint">
          See every email affiliates get in <a href="/app/settings/emails">Email previews</a>.
        </p>
      </fieldset>

      <fieldset class="fieldset">
        <legend class="legend">Look of the sign-up page and portal</legend>
        <div class="form-grid">
          {COLOURS.map((c) => (
            <div class="field" key={c.key}>
              <label class="label" for={`${id}-${c.key}`}>
                {c.label}
              </label>
              <div class="inline-field">
                <input
                  id={`${id}-${c.key}`}
                  type="color"
                  class="colour-input"
                  value={theme[c.key] ?? DEFAULTS[c.key]}
                  onInput={(e) => setTheme({ ...theme, [c.key]: e.currentTarget.value })}
                />
                <code>{theme[c.key] ?? `${DEFAULTS[c.key]} (default)`}</code>
              </div>
            </div>
          ))}
          <div class="field">
            <label class="label" for={`${id}-radius`}>
              Corner radius (px)
            </label>
            <input
              id={`${id}-radius`}
              type="number"
              class="input input-short"
              min={0}
              max={32}
              placeholder="Default"
              value={Number.isFinite(radius) ? String(radius) : ''}
              onInput={(e) => {
                const v = e.currentTarget.value.trim();
                const { radius: _drop, ...rest } = theme;
                setTheme(v === '' ? rest : { ...theme, radius: `${v}px` });
              }}
            />
          </div>
          <div class="field">
            <label class="label" for={`${id}-font`}>
              Font <span class="optional">(optional)</span>
            </label>
            <input
              id={`${id}-font`}
              class="input"
              maxLength={100}
              placeholder="Inter, system-ui, sans-serif"
              value={theme.font ?? ''}
              onInput={(e) => {
                const v = e.currentTarget.value;
                const { font: _drop, ...rest } = theme;
                setTheme(v.trim() === '' ? rest : { ...theme, font: v });
              }}
            />
          </div>
        </div>
        <ThemePreview theme={theme} />
        <FieldErrorsOf name="theme" />
        <div class="form-actions">
          <button type="button" class="btn btn-ghost btn-small" onClick={() => setTheme({})}>
            Use the default look
          </button>
        </div>
      </fieldset>

      <div class="form-actions">
        <SubmitButton form={form} busyLabel="Saving…">
          Save programme settings
        </SubmitButton>
      </div>
    </Form>
  );
}

/** A swatch of the public pages in the chosen colours, updated as they change. */
function ThemePreview({ theme }: { theme: Theme }) {
  const radius = theme.radius ?? '8px';
  return (
    <div
      class="theme-preview"
      data-theme-preview
      aria-label="Preview of the sign-up page's look"
      role="img"
      style={{
        background: theme.background ?? DEFAULTS.background,
        color: theme.text ?? DEFAULTS.text,
        borderRadius: radius,
        fontFamily: theme.font || undefined,
      }}
    >
      <strong>Join our affiliate programme</strong>
      <span>Earn a commission on every customer you refer.</span>
      <span class="theme-preview-button" style={{ background: theme.accent ?? DEFAULTS.accent, color: '#fff', borderRadius: radius }}>
        Apply
      </span>
    </div>
  );
}
