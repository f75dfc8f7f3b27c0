// Application bodies and queries (docs/affiliates.md "Applications"): the public form's body (JSON, or the
// page's urlencoded form turned into the same object), the answers checked against a campaign's questions,
// the operator's list filters and the rejection's reason.
import * as v from 'valibot';
import { APPLICATION_STATUSES, isCountry, MAX_ANSWER, MAX_NAME, MAX_URL_ANSWER, type ApplicationStatus } from '../domain/applications';
import type { SignupQuestion, SignupSettings } from '../domain/affiliates';
import { type FieldErrors, ValidationError } from '../domain/errors';
import { REQUIRED, boolean, email, field, nullableText, text, validate } from './fields';
import { nullablePayoutEmail } from './payout-email';
import { listQuery, pageQuery } from './query';

export const TERMS_REQUIRED = "Accept the programme's terms to apply.";

const country = field<string>(
  (value) => {
    if (typeof value !== 'string') return { ok: false, message: value === null ? 'This field may not be null.' : 'Not a valid string.' };
    const code = value.trim().toUpperCase();
    if (code === '') return { ok: false, message: 'This field may not be blank.' };
    return isCountry(code)
      ? { ok: true, value: code }
      : { ok: false, message: 'Choose a country from the list (ISO 3166-1 alpha-2 code).' };
  },
  {
    type: 'string',
    minLength: 2,
    maxLength: 2,
    description: 'ISO 3166-1 alpha-2 country code (any case; stored upper case).',
    examples: ['DE'],
  },
);

/** `{<question id>: value}`, values text (or null for a question left blank); checked against the questions later. */
const answersField = field<Record<string, string | null>>(
  (value) => {
    if (value === null) return { ok: true, value: {} };
    if (typeof value !== 'object' || Array.isArray(value))
      return { ok: false, message: 'Expected an object of answers keyed by question id.' };
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length > 20) return { ok: false, message: 'Ensure this field has no more than 20 answers.' };
    const out: Record<string, string | null> = Object.create(null) as Record<string, string | null>;
    for (const [key, answer] of entries) {
      if (key.length === 0 || key.length > 30) return { ok: false, message: 'Every key must be a question id.' };
      if (answer === null) out[key] = null;
      else if (typeof answer === 'string') {
        if (answer.length > MAX_ANSWER) return { ok: false, message: `Ensure every answer has no more than ${MAX_ANSWER} characters.` };
        out[key] = answer.trim();
      } else if (typeof answer === 'number' && Number.isFinite(answer)) out[key] = String(answer);
      else return { ok: false, message: 'Every answer must be text.' };
    }
    return { ok: true, value: out };
  },
  {
    type: ['object', 'null'],
    additionalProperties: { type: ['string', 'null'], maxLength: MAX_ANSWER },
    description: "The answers to the campaign's questions, keyed by question id. Keys that name no question are ignored.",
  },
);

const acceptedTerms = field<boolean>(
  (value) => {
    const parsed = v.safeParse(boolean, value);
    return parsed.success ? { ok: true, value: parsed.output } : { ok: false, message: TERMS_REQUIRED };
  },
  {
    type: 'boolean',
    description: "The applicant accepts the programme's terms: required (true) when the campaign has a `terms_url`.",
  },
);

export const joinApplicationBody = v.object(
  {
    email,
    name: text(MAX_NAME),
    country,
    payout_email: v.optional(nullablePayoutEmail, null),
    answers: v.optional(answersField, {}),
    accepted_terms: v.optional(acceptedTerms, false),
  },
  REQUIRED,
);

export type JoinApplicationInput = v.InferOutput<typeof joinApplicationBody>;

/** The field name of one answer in field errors (and in the page's form): `answers.<question id>`. */
export const answerField = (questionId: string) => `answers.${questionId}`;

function answerProblem(q: SignupQuestion, answer: string): string | null {
  if (q.type === 'url') {
    if (answer.length > MAX_URL_ANSWER) return `Ensure this field has no more than ${MAX_URL_ANSWER} characters.`;
    try {
      const url = new URL(answer);
      if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'Enter a web address (https://…).';
    } catch {
      return 'Enter a web address (https://…).';
    }
    return null;
  }
  if (q.type === 'choice') return (q.options ?? []).includes(answer) ? null : 'Choose one of the options.';
  return null;
}

/**
 * What the campaign's sign-up settings ask of an application: the terms accepted when it has a `terms_url`,
 * and the answers its questions take (only their ids, each required one present, URLs that parse as
 * http(s), choices among the options). Answers the checked answers; a refusal of an answer is keyed
 * `answers.<question id>`.
 */
export function checkApplication(
  signup: Pick<SignupSettings, 'questions' | 'terms_url'>,
  input: Pick<JoinApplicationInput, 'answers' | 'accepted_terms'>,
): Record<string, string> {
  const out: [string, string][] = [];
  const errors: FieldErrors = {};
  if (signup.terms_url && !input.accepted_terms) errors.accepted_terms = [TERMS_REQUIRED];
  const given = input.answers;
  for (const q of signup.questions) {
    const answer = Object.hasOwn(given, q.id) ? (given[q.id] ?? '') : '';
    if (answer === '') {
      if (q.required) errors[answerField(q.id)] = [REQUIRED];
      continue;
    }
    const problem = answerProblem(q, answer);
    if (problem) errors[answerField(q.id)] = [problem];
    else out.push([q.id, answer]);
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  // fromEntries defines own properties: a question id such as `__proto__` stays an answer.
  return Object.fromEntries(out);
}

/**
 * The whole application's check: the body's fields, and (for an open campaign's `signup`) the terms and the
 * answers, every refusal reported at once. Answers the body and its checked answers.
 */
export function validateApplication(
  signup: Pick<SignupSettings, 'questions' | 'terms_url'> | null,
  raw: Record<string, unknown>,
): { input: JoinApplicationInput; answers: Record<string, string> } {
  let input: JoinApplicationInput | null = null;
  let errors: FieldErrors = {};
  try {
    input = validate(joinApplicationBody, raw);
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    errors = { ...err.fields };
  }
  let answers: Record<string, string> = {};
  if (signup) {
    // With the body refused, its terms and answers are still checked (as far as they parse), so a form shows every error at once.
    const parsedAnswers = v.safeParse(answersField, raw.answers ?? {});
    const parsedTerms = v.safeParse(acceptedTerms, raw.accepted_terms ?? false);
    const given = input ?? {
      answers: parsedAnswers.success ? parsedAnswers.output : {},
      accepted_terms: parsedTerms.success && parsedTerms.output,
    };
    try {
      answers = checkApplication(signup, given);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      for (const [key, messages] of Object.entries(err.fields)) errors[key] ??= messages;
    }
  }
  if (Object.keys(errors).length > 0 || input === null) throw new ValidationError(errors);
  return { input, answers };
}

/** An urlencoded form post of the page (`answers[<id>]=…`, `accepted_terms=on`) as the JSON body's object. */
export function formObject(raw: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const given: [string, string][] = [];
  for (const [name, value] of new URLSearchParams(raw)) {
    const answer = /^answers\[([^\]]{1,30})\]$/.exec(name);
    if (answer) given.push([answer[1] as string, value]);
    else if (['email', 'name', 'country', 'payout_email', 'accepted_terms'].includes(name)) out[name] = value;
  }
  out.answers = Object.fromEntries(given);
  return out;
}

// ---- the operator's API ----

const statusFilter = field<ApplicationStatus>(
  (value) =>
    typeof value === 'string' && (APPLICATION_STATUSES as readonly string[]).includes(value)
      ? { ok: true, value: value as ApplicationStatus }
      : { ok: false, message: `Select a valid choice. ${String(value)} is not one of the available choices.` },
  { type: 'string', enum: [...APPLICATION_STATUSES], description: 'Only applications in this status.' },
);

export const listApplicationsQuery = listQuery({
  ...pageQuery,
  status: v.optional(statusFilter),
  campaign: v.optional(v.pipe(v.string(), v.description('Only applications to this campaign (id).'))),
});

export const rejectApplicationBody = v.object({ reason: v.optional(nullableText(500), null) }, REQUIRED);
