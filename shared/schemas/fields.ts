// Field schemas with Django REST Framework's messages, built on valibot's rawTransform so each field
// reports exactly one message (the first rule it breaks) in the contract's words.
import * as v from 'valibot';
import { ValidationError, type FieldErrors } from '../domain/errors';
import { isCurrencyCode } from '../domain/currency';
import { parseDecimal } from '../domain/money';

export const REQUIRED = 'This field is required.';
const NOT_NULL = 'This field may not be null.';
const BLANK = 'This field may not be blank.';
const NOT_STRING = 'Not a valid string.';

type Parse<T> = (value: unknown) => { ok: true; value: T } | { ok: false; message: string };

/** The JSON Schema of what a field accepts, for the OpenAPI document (shared/openapi). */
export type FieldJsonSchema = Record<string, unknown>;

/**
 * A field whose value is checked by `parse`; the message of its first failure is the field's error.
 * `json` describes what it accepts in the OpenAPI document (valibot metadata, read by
 * @valibot/to-json-schema); without it the field is documented as any value.
 */
/* @__NO_SIDE_EFFECTS__ */
export function field<T>(parse: Parse<T>, json: FieldJsonSchema = {}) {
  return v.pipe(
    v.unknown(),
    v.metadata(json),
    v.rawTransform<unknown, T>(({ dataset, addIssue, NEVER }) => {
      const surrogate = loneSurrogate(dataset.value);
      if (surrogate !== null) {
        addIssue({ message: `Surrogate characters are not allowed: U+${surrogate.toString(16).toUpperCase()}.` });
        return NEVER;
      }
      const result = parse(dataset.value);
      if (!result.ok) {
        addIssue({ message: result.message });
        return NEVER;
      }
      return result.value;
    }),
  );
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The first lone UTF-16 surrogate (a JSON `\ud800` escape without its pair) in a value or in the strings
 * nested in it, or null. Every field refuses one, as DRF's CharField does (ProhibitSurrogateCharactersValidator):
 * such text is not Unicode, cannot be stored as UTF-8 (DynamoDB refuses it, DynamoDB Local folds every one to
 * U+FFFD, so different values collided in uniqueness claims).
 */
export function loneSurrogate(value: unknown, depth = 0): number | null {
  if (typeof value === 'string') {
    const m = LONE_SURROGATE.exec(value);
    return m ? m[0].charCodeAt(0) : null;
  }
  if (depth > 8 || value === null || typeof value !== 'object') return null;
  for (const inner of Array.isArray(value) ? value : Object.values(value)) {
    const found = loneSurrogate(inner, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

const ok = <T>(value: T) => ({ ok: true as const, value });
const fail = (message: string) => ({ ok: false as const, message });

/** DRF CharField: numbers are accepted and turned into strings; surrounding whitespace is trimmed. */
function toText(value: unknown): { ok: true; value: string } | { ok: false; message: string } {
  if (value === null) return fail(NOT_NULL);
  if (typeof value === 'string') return ok(value.trim());
  if (typeof value === 'number' && Number.isFinite(value)) return ok(String(value));
  return fail(NOT_STRING);
}

/* @__NO_SIDE_EFFECTS__ */
export function text(max: number, opts: { pattern?: RegExp; patternMessage?: string; json?: FieldJsonSchema } = {}) {
  return field<string>(
    (value) => {
      const t = toText(value);
      if (!t.ok) return t;
      if (t.value === '') return fail(BLANK);
      if (t.value.length > max) return fail(`Ensure this field has no more than ${max} characters.`);
      if (opts.pattern && !opts.pattern.test(t.value)) return fail(opts.patternMessage ?? 'Enter a valid value.');
      return t;
    },
    { type: 'string', minLength: 1, maxLength: max, ...(opts.pattern ? { pattern: opts.pattern.source } : {}), ...opts.json },
  );
}

/** Optional personal names: null or blank are stored as null. */
/* @__NO_SIDE_EFFECTS__ */
export function nullableText(max: number) {
  return field<string | null>(
    (value) => {
      if (value === null) return ok(null);
      const t = toText(value);
      if (!t.ok) return t;
      if (t.value.length > max) return fail(`Ensure this field has no more than ${max} characters.`);
      return ok(t.value === '' ? null : t.value);
    },
    { type: ['string', 'null'], maxLength: max, description: 'Blank is stored as null.' },
  );
}

// Deliberately simple (Django's validator is looser still on the local part); the address is
// trimmed and its domain lower-cased so uniqueness ignores case.
const EMAIL =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/;

export const email = field<string>(
  (value) => {
    const t = toText(value);
    if (!t.ok) return t;
    if (t.value === '') return fail(BLANK);
    if (t.value.length > 254 || !EMAIL.test(t.value)) return fail('Enter a valid email address.');
    const at = t.value.lastIndexOf('@');
    return ok(t.value.slice(0, at) + t.value.slice(at).toLowerCase());
  },
  { type: 'string', format: 'email', maxLength: 254 },
);

/** One of `choices` (DRF's ChoiceField messages). */
/* @__NO_SIDE_EFFECTS__ */
export function choice<T extends string>(choices: readonly T[]) {
  return field<T>(
    (value) => {
      if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return ok(value as T);
      if (value === null) return fail(NOT_NULL);
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') return fail(NOT_STRING);
      return fail(`"${String(value).slice(0, 40)}" is not a valid choice.`);
    },
    { type: 'string', enum: [...choices] },
  );
}

/** An email or null (blank is null): e.g. where a member's payouts are sent. */
export const nullableEmail = field<string | null>(
  (value) => {
    if (value === null || (typeof value === 'string' && value.trim() === '')) return ok(null);
    const t = toText(value);
    if (!t.ok) return t;
    if (t.value.length > 254 || !EMAIL.test(t.value)) return fail('Enter a valid email address.');
    const at = t.value.lastIndexOf('@');
    return ok(t.value.slice(0, at) + t.value.slice(at).toLowerCase());
  },
  { type: ['string', 'null'], format: 'email', maxLength: 254, description: 'Blank is stored as null.' },
);

const TRUE = new Set<unknown>([true, 'true', 'True', 'TRUE', '1', 1, 'yes', 'on']);
const FALSE = new Set<unknown>([false, 'false', 'False', 'FALSE', '0', 0, 'no', 'off']);

export const boolean = field<boolean>(
  (value) => {
    if (value === null) return fail(NOT_NULL);
    if (TRUE.has(value)) return ok(true);
    if (FALSE.has(value)) return ok(false);
    return fail('Must be a valid boolean.');
  },
  { type: 'boolean' },
);

/** A non-negative amount with at most 10 digits and 2 decimals, parsed to integer cents. */
export const decimal = field<number>(
  (value) => {
    if (value === null) return fail(NOT_NULL);
    const parsed = parseDecimal(value);
    return parsed.ok ? ok(parsed.cents) : fail(parsed.message);
  },
  {
    type: ['string', 'number'],
    description: 'A non-negative amount with at most 2 decimal places and 10 digits, as a JSON string or number.',
    examples: ['15.00'],
  },
);

export const currency = field<string>(
  (value) => {
    const t = toText(value);
    if (!t.ok) return t;
    if (t.value === '') return fail(BLANK);
    if (!isCurrencyCode(t.value)) return fail(`"${t.value}" is not a valid currency code.`);
    return ok(t.value.toUpperCase());
  },
  { type: 'string', minLength: 3, maxLength: 3, description: 'ISO 4217 currency code (any case; stored upper case).', examples: ['USD'] },
);

/** Whole number >= min, or null. */
/* @__NO_SIDE_EFFECTS__ */
export function nullableInteger(min: number) {
  return field<number | null>(
    (value) => {
      if (value === null) return ok(null);
      const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n)) return fail('A valid integer is required.');
      if (n < min) return fail(`Ensure this value is greater than or equal to ${min}.`);
      if (n > 1200) return fail('Ensure this value is less than or equal to 1200.');
      return ok(n);
    },
    { type: ['integer', 'null'], minimum: min, maximum: 1200 },
  );
}

/** `{ "id": ... }` or null: a reference to another resource; keys other than id are ignored. */
/* @__NO_SIDE_EFFECTS__ */
export function reference<T>(parseId: (id: unknown) => T | null, invalidId: (id: unknown) => string, idSchema: FieldJsonSchema = {}) {
  return field<{ id: T } | null>(
    (value) => {
      if (value === null) return ok(null);
      if (typeof value !== 'object' || Array.isArray(value)) {
        return fail(`Invalid data. Expected a dictionary, but got ${pythonType(value)}.`);
      }
      const raw = (value as Record<string, unknown>).id;
      if (raw === undefined || raw === null) return fail('This field must be an object with an id.');
      const id = parseId(raw);
      return id === null ? fail(invalidId(raw)) : ok({ id });
    },
    {
      anyOf: [
        { type: 'object', properties: { id: idSchema }, required: ['id'], description: 'A reference: other keys are ignored.' },
        { type: 'null' },
      ],
    },
  );
}

/** Python's name for a JSON value's type, as DRF writes it in its messages. */
export function pythonType(value: unknown, rawNumber?: string): string {
  if (value === null) return 'NoneType';
  if (Array.isArray(value)) return 'list';
  switch (typeof value) {
    case 'string':
      return 'str';
    case 'boolean':
      return 'bool';
    case 'number':
      return Number.isInteger(value) && !(rawNumber && /[.eE]/.test(rawNumber)) ? 'int' : 'float';
    default:
      return 'dict';
  }
}

/** Validates `input` against a schema; every field's first error is reported at once. */
export function validate<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortPipeEarly: true });
  if (result.success) return result.output;
  // No prototype: a client-chosen key such as `toString` or `__proto__` (an unknown query parameter) is an
  // own key like any other, not an inherited member that hides the error.
  const fields: FieldErrors = Object.create(null) as FieldErrors;
  for (const issue of result.issues) {
    // An empty key (an unknown `""` of a strict object) is no field name a client can read: non_field_errors.
    const key = String(issue.path?.[0]?.key ?? '') || 'non_field_errors';
    if (!Object.hasOwn(fields, key)) fields[key] = [issue.message];
  }
  throw new ValidationError(fields);
}
