// Tax details (GET/PUT /portal/v1/tax-details/), shown when the programme collects them: until they are
// given, payouts wait. What was given is shown masked (the TIN's last four characters); giving them again
// replaces them. The API names nested fields with a dot (`us.tin`): the fields here carry those names, so
// each message lands under its field.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { formatDate } from '../ui/format';
import { CheckField, Field, Form, SelectField, SubmitButton, TextAreaField, checked, text, textOrNull, useFormState } from '../ui/form';
import { errorCode, getTaxDetails, putTaxDetails, toProblem, type Problem, type TaxDetails } from './api';
import { post } from './host';

/** Every ISO 3166-1 alpha-2 region the browser can name, by name. */
function countryOptions(): { value: string; label: string }[] {
  const names = new Intl.DisplayNames(['en'], { type: 'region' });
  const out: { value: string; label: string }[] = [];
  for (let a = 65; a <= 90; a++)
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      const label = names.of(code);
      if (label && label !== code && code !== 'ZZ' && !/^(?:X[A-Z]|Q[M-Z]|AA|OO|EU|EZ|UN|UK)$/.test(code)) out.push({ value: code, label });
    }
  return out.sort((x, y) => x.label.localeCompare(y.label));
}

const FORM_NAMES = { w9: 'W-9 (US person)', w8ben: 'W-8BEN (outside the US)' } as const;

export function TaxDetailsSection() {
  const [details, setDetails] = useState<TaxDetails | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);

  useEffect(() => {
    setProblem(null);
    getTaxDetails().then(setDetails, (err: unknown) => {
      const p = toProblem(err);
      if (p.status === 401) return;
      setProblem(p);
      post({ type: 'error', code: errorCode(p), message: p.message ?? '' });
    });
  }, [attempt]);

  return (
    <section id="tax-details" class="section" aria-labelledby="tax-title">
      <h2 id="tax-title" class="section-title">
        Tax details
      </h2>
      <p class="section-intro">
        The programme needs your tax details before it can pay you. They are stored encrypted and only the programme's owner and finance
        team can read them.
      </p>
      {problem ? (
        <div class="notice notice-error" role="alert">
          <p>Your tax details could not be loaded: {problem.message}</p>
          <button type="button" class="btn btn-secondary btn-small" onClick={() => setAttempt((n) => n + 1)}>
            Try again
          </button>
        </div>
      ) : !details ? (
        <p class="loading" role="status">
          <span class="spinner" aria-hidden="true" />
          Loading your tax details…
        </p>
      ) : details.provided && !editing ? (
        <div class="card" data-testid="tax-summary">
          <dl class="facts">
            <div>
              <dt>Form</dt>
              <dd>{details.form ? FORM_NAMES[details.form] : ''}</dd>
            </div>
            <div>
              <dt>Legal name</dt>
              <dd>{details.legal_name}</dd>
            </div>
            <div>
              <dt>Country</dt>
              <dd>{details.country}</dd>
            </div>
            <div>
              <dt>Address</dt>
              <dd class="masked">{details.address}</dd>
            </div>
            {details.tin && (
              <div>
                <dt>Tax number</dt>
                <dd class="masked">{details.tin}</dd>
              </div>
            )}
          </dl>
          <div class="form-actions">
            <button type="button" class="btn btn-secondary" onClick={() => setEditing(true)}>
              Replace tax details
            </button>
            <p class="form-saved" role="status">
              {saved ? 'Your tax details are saved.' : details.updated_at ? `Given on ${formatDate(details.updated_at)}.` : ''}
            </p>
          </div>
        </div>
      ) : (
        <TaxForm
          onSaved={(next) => {
            setDetails(next);
            setEditing(false);
            setSaved(true);
          }}
          onCancel={details.provided ? () => setEditing(false) : null}
        />
      )}
    </section>
  );
}

function TaxForm({ onSaved, onCancel }: { onSaved: (details: TaxDetails) => void; onCancel: (() => void) | null }) {
  const form = useFormState();
  const countries = useMemo(countryOptions, []);
  const [kind, setKind] = useState<'w9' | 'w8ben'>('w8ben');
  const pick = [{ value: '', label: 'Choose a country' }, ...countries];
  return (
    <div class="card">
      <Form
        form={form}
        labelledBy="tax-form-title"
        onSubmit={async (data) => {
          const body = {
            legal_name: text(data, 'legal_name'),
            country: text(data, 'country'),
            address: text(data, 'address'),
            ...(kind === 'w9'
              ? { us: { tin: text(data, 'us.tin'), w9_certified: checked(data, 'us.w9_certified') } }
              : {
                  w8ben: {
                    name: text(data, 'w8ben.name'),
                    country_of_citizenship: text(data, 'w8ben.country_of_citizenship'),
                    permanent_address: text(data, 'w8ben.permanent_address'),
                    foreign_tin: textOrNull(data, 'w8ben.foreign_tin'),
                    date_of_birth: text(data, 'w8ben.date_of_birth'),
                    treaty_country: textOrNull(data, 'w8ben.treaty_country'),
                    certified: checked(data, 'w8ben.certified'),
                  },
                }),
          };
          onSaved(await putTaxDetails(body));
        }}
      >
        <h3 id="tax-form-title" class="card-title">
          Your tax details
        </h3>
        <Field name="legal_name" label="Legal name" autoComplete="name" maxLength={200} hint="As on your tax return." />
        <SelectField name="country" label="Country of residence" options={pick} defaultValue="" />
        <TextAreaField name="address" label="Address" rows={3} maxLength={500} autoComplete="street-address" />
        <SelectField
          name="form"
          label="Tax form"
          value={kind}
          onChange={(value) => setKind(value === 'w9' ? 'w9' : 'w8ben')}
          options={[
            { value: 'w8ben', label: FORM_NAMES.w8ben },
            { value: 'w9', label: FORM_NAMES.w9 },
          ]}
          hint="US citizens and residents give a W-9; everyone else a W-8BEN."
        />
        {kind === 'w9' ? (
          <fieldset class="fieldset">
            <legend>W-9</legend>
            <Field
              name="us.tin"
              label="Taxpayer identification number"
              hint="SSN, ITIN or EIN: 9 digits."
              autoComplete="off"
              maxLength={11}
            />
            <CheckField
              name="us.w9_certified"
              label="Under penalties of perjury, I certify that the number shown is my correct taxpayer identification number and that I am a US person."
            />
          </fieldset>
        ) : (
          <fieldset class="fieldset">
            <legend>W-8BEN</legend>
            <Field name="w8ben.name" label="Name of the beneficial owner" autoComplete="name" maxLength={200} />
            <SelectField name="w8ben.country_of_citizenship" label="Country of citizenship" options={pick} defaultValue="" />
            <TextAreaField name="w8ben.permanent_address" label="Permanent residence address" rows={3} maxLength={500} />
            <Field name="w8ben.foreign_tin" label="Foreign tax identification number" optional autoComplete="off" maxLength={50} />
            <Field
              name="w8ben.date_of_birth"
              label="Date of birth"
              hint="YYYY-MM-DD, e.g. 1990-04-21."
              placeholder="YYYY-MM-DD"
              autoComplete="bday"
              maxLength={10}
            />
            <SelectField
              name="w8ben.treaty_country"
              label="Tax treaty country"
              optional
              options={[{ value: '', label: 'None' }, ...countries]}
              defaultValue=""
              hint="Where you claim a treaty benefit, if any."
            />
            <CheckField
              name="w8ben.certified"
              label="Under penalties of perjury, I certify that I am the beneficial owner of this income and not a US person, and that the information above is true."
            />
          </fieldset>
        )}
        <div class="form-actions">
          <SubmitButton form={form} busyLabel="Saving…">
            Save tax details
          </SubmitButton>
          {onCancel && (
            <button type="button" class="btn btn-secondary" onClick={onCancel}>
              Cancel
            </button>
          )}
        </div>
      </Form>
    </div>
  );
}
