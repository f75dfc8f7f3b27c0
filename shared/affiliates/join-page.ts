// What the public join page and its confirmation page say (docs/affiliates.md "The sign-up page"): HTML
// bodies, their stylesheet and the form's script, put in the public page shell (./page.ts publicPage: the
// account's theme, a CSP that allows only these inline blocks by their SHA-256).
//
// The form works without JavaScript: a urlencoded POST to the public endpoint, answered with this page
// again (400, the errors beside their fields and in a summary that takes focus) or a 303 to `?sent=1`.
// With JavaScript the same form posts JSON with fetch and shows the errors and the success in place.
// Every field has a label; an error is linked to its field by aria-describedby and marks it aria-invalid.
import { answerField } from '../schemas/applications';
import { countryOptions, JOIN_REQUEST_SECONDS, MAX_ANSWER, MAX_NAME, MAX_URL_ANSWER } from '../domain/applications';
import type { SignupQuestion } from '../domain/affiliates';
import type { FieldErrors } from '../domain/errors';
import { formatCents } from '../domain/money';
import { statsCurrency, type Campaign } from '../domain/models';
import { campaignTermsInput, discountText, termsText } from '../domain/portal';
import { escapeHtml } from './page';

const e = escapeHtml;

/** The account's display name. */
export const accountName = (account: Record<string, unknown> | null): string =>
  typeof account?.name === 'string' && account.name.trim() !== '' ? account.name.trim() : 'Refloop';

/** The campaign's reward terms in words, and what the people it refers get (null when nothing). */
export function programmeTerms(c: Campaign): { earn: string; discount: string | null } {
  const terms = campaignTermsInput(c);
  const off = discountText(c);
  const min =
    terms.reward_type === 'commission' && c.min_payout > 0
      ? ` Payouts are sent once you have ${formatCents(c.min_payout)} ${statsCurrency(c)} approved.`
      : '';
  return { earn: `${termsText(terms)}${min}`, discount: off ? `The people you refer get ${off}.` : null };
}

// ---- the form ----

interface Field {
  /** The body's field name (also the error key). */
  key: string;
  id: string;
  hint?: string;
}

const idOf = (key: string) => (key.startsWith('answers.') ? `f-q-${key.slice('answers.'.length)}` : `f-${key}`);

/** The label, control, hint and error of one field; `control` gets the aria attributes. */
function fieldBlock(f: Field, label: string, control: (attrs: string) => string, errors: FieldErrors, marker: string): string {
  const error = errors[f.key]?.[0];
  const hintId = f.hint ? `${f.id}-hint` : '';
  const errorId = `${f.id}-error`;
  const described = [hintId, error ? errorId : ''].filter(Boolean).join(' ');
  const attrs = `id="${f.id}" data-field="${e(f.key)}"${hintId ? ` data-hint="${hintId}"` : ''}${described ? ` aria-describedby="${described}"` : ''}${error ? ' aria-invalid="true"' : ''}`;
  return [
    '<div class="field">',
    `<label for="${f.id}">${e(label)}${marker}</label>`,
    f.hint ? `<p class="hint" id="${hintId}">${e(f.hint)}</p>` : '',
    control(attrs),
    `<p class="error" id="${errorId}"${error ? '' : ' hidden'}>${error ? e(error) : ''}</p>`,
    '</div>',
  ].join('');
}

const OPTIONAL = ' <span class="hint">(optional)</span>';
const REQUIRED_MARK = ' <span class="hint">(required)</span>';

function questionBlock(q: SignupQuestion, values: Record<string, string>, errors: FieldErrors): string {
  const key = answerField(q.id);
  const name = `answers[${q.id}]`;
  const value = values[key] ?? '';
  const required = q.required ? ' required' : '';
  const marker = q.required ? REQUIRED_MARK : OPTIONAL;
  const f: Field = { key, id: idOf(key) };
  if (q.type === 'choice') {
    const options = (q.options ?? []).map((o) => `<option value="${e(o)}"${o === value ? ' selected' : ''}>${e(o)}</option>`).join('');
    return fieldBlock(
      f,
      q.label,
      (a) => `<select ${a} name="${e(name)}"${required}><option value="">Choose…</option>${options}</select>`,
      errors,
      marker,
    );
  }
  if (q.type === 'url') {
    return fieldBlock(
      { ...f, hint: 'A web address, starting with https://' },
      q.label,
      (a) => `<input ${a} name="${e(name)}" type="url" inputmode="url" maxlength="${MAX_URL_ANSWER}" value="${e(value)}"${required}>`,
      errors,
      marker,
    );
  }
  return fieldBlock(
    f,
    q.label,
    (a) => `<textarea ${a} name="${e(name)}" rows="3" maxlength="${MAX_ANSWER}"${required}>${e(value)}</textarea>`,
    errors,
    marker,
  );
}

const FIELD_LABELS: Record<string, string> = {
  email: 'Email',
  name: 'Full name',
  country: 'Country',
  payout_email: 'Payout email',
  accepted_terms: 'Terms',
};

/** The summary of every error, each a link to its field; focused on load when present (no-JS path). */
function errorSummary(errors: FieldErrors, questions: readonly SignupQuestion[]): string {
  const entries = Object.entries(errors);
  const items = entries
    .map(([key, messages]) => {
      const q = questions.find((x) => answerField(x.id) === key);
      const label = FIELD_LABELS[key] ?? q?.label ?? null;
      const text = `${label ? `${label}: ` : ''}${messages[0] ?? ''}`;
      return label ? `<li><a href="#${idOf(key)}">${e(text)}</a></li>` : `<li>${e(text)}</li>`;
    })
    .join('');
  return [
    `<div class="notice" id="form-errors" tabindex="-1"${entries.length ? ' autofocus' : ' hidden'}>`,
    '<h2 id="form-errors-title">Please check the form</h2>',
    `<ul id="form-errors-list">${items}</ul>`,
    '</div>',
  ].join('');
}

export interface JoinPageState {
  /** The submitted values (re-shown after an error), keyed like the errors. */
  values?: Record<string, string>;
  errors?: FieldErrors;
}

/** The join page's body: the programme's terms and the application form. */
export function joinPageBody(account: Record<string, unknown>, campaign: Campaign, action: string, state: JoinPageState = {}): string {
  const values = state.values ?? {};
  const errors = state.errors ?? {};
  const { earn, discount } = programmeTerms(campaign);
  const signup = campaign.signup;
  const v = (key: string) => e(values[key] ?? '');
  const countries = countryOptions()
    .map((c) => `<option value="${c.code}"${values.country === c.code ? ' selected' : ''}>${e(c.name)}</option>`)
    .join('');
  const termsError = errors.accepted_terms?.[0];
  // The terms are accepted by a checkbox when the campaign links them (its `terms_url`).
  const termsBlock = signup.terms_url
    ? [
        '<div class="field">',
        '<div class="check">',
        `<input type="checkbox" id="f-accepted_terms" name="accepted_terms" value="on" required data-field="accepted_terms" data-hint="f-accepted_terms-hint" aria-describedby="f-accepted_terms-hint${termsError ? ' f-accepted_terms-error' : ''}"${termsError ? ' aria-invalid="true"' : ''}${values.accepted_terms ? ' checked' : ''}>`,
        `<label for="f-accepted_terms">I accept the programme's terms</label>`,
        '</div>',
        `<p class="hint" id="f-accepted_terms-hint">Read the <a href="${e(signup.terms_url)}" target="_blank" rel="noopener noreferrer">full terms of the programme</a> (opens in a new tab).</p>`,
        `<p class="error" id="f-accepted_terms-error"${termsError ? '' : ' hidden'}>${termsError ? e(termsError) : ''}</p>`,
        '</div>',
      ].join('\n')
    : '';
  return [
    '<header>',
    `<p class="muted">${e(accountName(account))}</p>`,
    `<h1>Join the ${e(campaign.name)} programme</h1>`,
    '</header>',
    '<section class="terms" aria-labelledby="terms-title">',
    '<h2 id="terms-title">What you earn</h2>',
    `<p>${e(earn)}</p>`,
    discount ? `<p>${e(discount)}</p>` : '',
    signup.approval === 'manual'
      ? '<p>Every application is reviewed; you will hear from us by email.</p>'
      : '<p>Once you confirm your email, you can start sharing your link.</p>',
    '</section>',
    `<form class="join-form" id="join-form" method="post" action="${e(action)}">`,
    '<h2>Apply</h2>',
    errorSummary(errors, signup.questions),
    fieldBlock(
      { key: 'email', id: 'f-email' },
      'Email',
      (a) => `<input ${a} name="email" type="email" autocomplete="email" maxlength="254" required value="${v('email')}">`,
      errors,
      '',
    ),
    fieldBlock(
      { key: 'name', id: 'f-name' },
      'Full name',
      (a) => `<input ${a} name="name" type="text" autocomplete="name" maxlength="${MAX_NAME}" required value="${v('name')}">`,
      errors,
      '',
    ),
    fieldBlock(
      { key: 'country', id: 'f-country' },
      'Country',
      (a) =>
        `<select ${a} name="country" autocomplete="country" required><option value="">Choose your country…</option>${countries}</select>`,
      errors,
      '',
    ),
    fieldBlock(
      { key: 'payout_email', id: 'f-payout_email', hint: 'Where your payouts go (PayPal or Wise). You can add it later.' },
      'Payout email',
      (a) => `<input ${a} name="payout_email" type="email" autocomplete="email" maxlength="254" value="${v('payout_email')}">`,
      errors,
      OPTIONAL,
    ),
    ...signup.questions.map((q) => questionBlock(q, values, errors)),
    termsBlock,
    '<p class="error" id="form-problem" role="alert" hidden></p>',
    '<button type="submit" id="join-submit">Apply</button>',
    '</form>',
  ].join('\n');
}

const HOURS = JOIN_REQUEST_SECONDS / 3600;

/** After a submission (the no-JS path's `?sent=1`, and what the script shows in place). */
export const SENT_TITLE = 'Check your email';
export const SENT_TEXT = `We sent a message to the address you gave. Open the link in it to confirm your email and send your application. The link works for ${HOURS} hours.`;

export function sentBody(account: Record<string, unknown> | null): string {
  return [
    '<header>',
    `<p class="muted">${e(accountName(account))}</p>`,
    `<h1>${SENT_TITLE}</h1>`,
    '</header>',
    `<p>${e(SENT_TEXT)}</p>`,
    '<p class="hint">Nothing there? Look in your spam folder, or send the form again in a few minutes.</p>',
  ].join('\n');
}

export const NOT_FOUND_TITLE = 'This programme is not taking applications';
export function notFoundBody(): string {
  return [
    `<h1>${NOT_FOUND_TITLE}</h1>`,
    '<p>The page does not exist, or the programme is closed to new applications. Check the address you were given.</p>',
  ].join('\n');
}

// ---- the confirmation link's pages ----

export type ConfirmKind = 'ask' | 'pending' | 'approved' | 'rejected' | 'already-pending' | 'already-member' | 'closed' | 'unknown';

/** Title and body of the confirmation page in one state; `loginUrl` is the portal's login page (when the account has a slug). */
export function confirmBody(
  kind: ConfirmKind,
  o: { account: Record<string, unknown> | null; campaign: Campaign | null; action: string; loginUrl: string | null },
): { title: string; body: string } {
  const programme = o.campaign ? `the ${o.campaign.name} programme` : 'the programme';
  const login = o.loginUrl ? `<p><a href="${e(o.loginUrl)}">Log in to your portal</a></p>` : '';
  const page = (title: string, parts: string[]) => ({
    title,
    body: ['<header>', `<p class="muted">${e(accountName(o.account))}</p>`, `<h1>${e(title)}</h1>`, '</header>', ...parts].join('\n'),
  });
  switch (kind) {
    case 'ask':
      return page('Confirm your application', [
        `<p>Confirm your email address to send your application to ${e(programme)}.</p>`,
        `<form method="post" action="${e(o.action)}"><button type="submit">Confirm my email</button></form>`,
      ]);
    case 'pending':
      return page('Your application is in', [
        `<p>Thank you. Your application to ${e(programme)} is waiting for review; we will email you when it is decided.</p>`,
      ]);
    case 'approved':
      return page('You are approved', [
        `<p>Welcome to ${e(programme)}. Check your email for your login link: it opens your portal, where you find your referral link.</p>`,
        login,
      ]);
    case 'rejected':
      return page('Your application was reviewed', ['<p>We sent you an email about it.</p>']);
    case 'already-pending':
      return page('You already applied', [
        `<p>An application from this address to ${e(programme)} is already waiting for review; we will email you when it is decided.</p>`,
      ]);
    case 'already-member':
      return page('You are already a member', [
        `<p>This address already belongs to a member of ${e(programme)}. Log in to see your referral link and earnings.</p>`,
        login,
      ]);
    case 'closed':
      return page(NOT_FOUND_TITLE, ['<p>The programme closed to new applications since you applied. Nothing was sent.</p>']);
    default:
      return page('This link does not work', [
        '<p>It is unknown or has expired (links work for 24 hours). Apply again from the programme page to get a new one.</p>',
      ]);
  }
}

// ---- the form's script (allowed by its hash) ----

/** Progressive enhancement of the form: a JSON POST, errors and success shown in place, focus moved to them. */
export const JOIN_SCRIPT = `(() => {
  const form = document.getElementById('join-form');
  if (!form || !window.fetch) return;
  const summary = document.getElementById('form-errors');
  const list = document.getElementById('form-errors-list');
  const problem = document.getElementById('form-problem');
  const button = document.getElementById('join-submit');
  const fields = () => Array.from(form.querySelectorAll('[data-field]'));
  const clear = () => {
    for (const el of fields()) {
      el.removeAttribute('aria-invalid');
      const hint = el.getAttribute('data-hint');
      if (hint) el.setAttribute('aria-describedby', hint); else el.removeAttribute('aria-describedby');
      const err = document.getElementById(el.id + '-error');
      if (err) { err.textContent = ''; err.hidden = true; }
    }
    list.textContent = '';
    summary.hidden = true;
    problem.hidden = true;
  };
  const show = (errors) => {
    for (const [key, messages] of Object.entries(errors)) {
      const message = Array.isArray(messages) ? String(messages[0]) : String(messages);
      const el = fields().find((f) => f.getAttribute('data-field') === key);
      const item = document.createElement('li');
      if (el) {
        const err = document.getElementById(el.id + '-error');
        err.textContent = message;
        err.hidden = false;
        el.setAttribute('aria-invalid', 'true');
        el.setAttribute('aria-describedby', [el.getAttribute('data-hint'), err.id].filter(Boolean).join(' '));
        const label = form.querySelector('label[for="' + el.id + '"]');
        const link = document.createElement('a');
        link.href = '#' + el.id;
        link.textContent = (label ? label.textContent.replace(/ \\((optional|required)\\)$/, '') + ': ' : '') + message;
        item.appendChild(link);
      } else item.textContent = message;
      list.appendChild(item);
    }
    summary.hidden = false;
    summary.focus();
  };
  const fail = (text) => { problem.textContent = text; problem.hidden = false; };
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clear();
    const body = { answers: {} };
    for (const [name, value] of new FormData(form)) {
      const answer = /^answers\\[(.+)\\]$/.exec(name);
      if (answer) body.answers[answer[1]] = value;
      else if (name !== 'accepted_terms') body[name] = value;
    }
    body.accepted_terms = form.elements.accepted_terms ? form.elements.accepted_terms.checked : false;
    if (!body.payout_email) body.payout_email = null;
    button.disabled = true;
    form.setAttribute('aria-busy', 'true');
    try {
      const res = await fetch(form.action, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body), credentials: 'omit' });
      if (res.status === 202) {
        const done = document.createElement('div');
        done.className = 'notice';
        done.tabIndex = -1;
        done.setAttribute('role', 'status');
        const title = document.createElement('h2');
        title.textContent = ${JSON.stringify(SENT_TITLE)};
        const text = document.createElement('p');
        text.textContent = ${JSON.stringify(SENT_TEXT)};
        done.append(title, text);
        form.replaceWith(done);
        done.focus();
        return;
      }
      if (res.status === 400) { show(await res.json()); return; }
      fail('Your application could not be sent (error ' + res.status + '). Please try again in a moment.');
    } catch {
      fail('Your application could not be sent: check your connection and try again.');
    } finally {
      button.disabled = false;
      form.removeAttribute('aria-busy');
    }
  });
})();`;
