// Fraud rule bodies and queries (docs/fraud.md): the rule settings' PATCH, the preview's body, the review
// queue's filters and the body of a flag's resolution.
import * as v from 'valibot';
import {
  DEFAULT_FRAUD_SETTINGS,
  FRAUD_ACTIONS,
  FRAUD_FLAG_STATUSES,
  FRAUD_RULES,
  type FraudAction,
  type FraudFlagStatus,
  type FraudRule,
  type FraudSettings,
} from '../domain/fraud';
import { choice, field, nullableText, REQUIRED } from './fields';
import { listQuery, pageQuery } from './query';

/** The thresholds a rule takes, each a whole number within [min, max]. */
export const THRESHOLD_LIMITS: { [R in FraudRule]: Record<string, [number, number]> } = {
  self_referral: {},
  duplicate_ip: { max_referrals: [1, 1000], window_hours: [1, 168] },
  disposable_email: {},
  click_spam: { ratio: [2, 100_000], min_clicks: [1, 10_000_000], window_days: [1, 90] },
  refund_rate: { max_percent: [1, 100], min_conversions: [1, 10_000], window_days: [7, 90] },
  velocity: { multiple: [2, 1000], min_conversions: [1, 100_000], mean_days: [7, 90], history_days: [1, 90] },
};

/** One rule's settings in a PATCH: `{action?, <threshold>?...}`; names not taken answer 400. */
function ruleSetting(rule: FraudRule) {
  const limits = THRESHOLD_LIMITS[rule];
  const thresholdNames = Object.keys(limits);
  return field<Partial<FraudSettings[FraudRule]>>(
    (value) => {
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        return { ok: false, message: 'Expected an object: {"action": "off" | "flag" | "hold", ...thresholds}.' };
      const out: Record<string, unknown> = {};
      for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
        if (name === 'action') {
          if (typeof raw !== 'string' || !(FRAUD_ACTIONS as readonly string[]).includes(raw))
            return { ok: false, message: `action: "${String(raw).slice(0, 40)}" is not a valid choice (off, flag, hold).` };
          out.action = raw;
          continue;
        }
        // Own names only: `constructor` or `toString` are no threshold.
        const limit = Object.hasOwn(limits, name) ? limits[name] : undefined;
        if (!limit)
          return {
            ok: false,
            message: thresholdNames.length
              ? `${name.slice(0, 40)}: not a setting of ${rule} (action, ${thresholdNames.join(', ')}).`
              : `${name.slice(0, 40)}: ${rule} takes only an action.`,
          };
        if (typeof raw !== 'number' || !Number.isInteger(raw)) return { ok: false, message: `${name}: a valid integer is required.` };
        if (raw < limit[0] || raw > limit[1]) return { ok: false, message: `${name}: must be between ${limit[0]} and ${limit[1]}.` };
        out[name] = raw;
      }
      return { ok: true, value: out as Partial<FraudSettings[FraudRule]> };
    },
    {
      type: 'object',
      properties: {
        action: { type: 'string', enum: [...FRAUD_ACTIONS] },
        ...Object.fromEntries(Object.entries(limits).map(([n, [min, max]]) => [n, { type: 'integer', minimum: min, maximum: max }])),
      },
      additionalProperties: false,
      description: `Default: ${JSON.stringify(DEFAULT_FRAUD_SETTINGS[rule])}.`,
    },
  );
}

/** PATCH /v1/fraud-rules/: any of the rules, each with any of its settings; the rest stay as they are. */
export const fraudRulesBody = v.strictObject(
  Object.fromEntries(FRAUD_RULES.map((rule) => [rule, v.optional(ruleSetting(rule))])) as {
    [R in FraudRule]: v.OptionalSchema<ReturnType<typeof ruleSetting>, undefined>;
  },
  // An unknown key is keyed by itself; a body that is not an object, non_field_errors.
  (issue) =>
    issue.expected === 'never'
      ? `Not a fraud rule: the rules are ${FRAUD_RULES.join(', ')}.`
      : 'Expected an object of rules: {"<rule>": {"action": "off" | "flag" | "hold", ...thresholds}}.',
);
export type FraudRulesPatch = { [R in FraudRule]?: Partial<FraudSettings[R]> };

/** POST /v1/fraud-rules/preview/: one rule, the action and the thresholds to try (missing ones: the account's). */
export const fraudPreviewBody = v.object(
  {
    rule: choice<FraudRule>(FRAUD_RULES),
    action: v.optional(choice<FraudAction>(FRAUD_ACTIONS)),
    thresholds: v.optional(
      field<Record<string, number>>(
        (value) => {
          if (value === null || typeof value !== 'object' || Array.isArray(value))
            return { ok: false, message: 'Expected an object of thresholds.' };
          const out: Record<string, number> = {};
          for (const [name, raw] of Object.entries(value as Record<string, unknown>)) {
            if (typeof raw !== 'number' || !Number.isInteger(raw))
              return { ok: false, message: `${name.slice(0, 40)}: a valid integer is required.` };
            out[name] = raw;
          }
          return { ok: true, value: out };
        },
        {
          type: 'object',
          additionalProperties: { type: 'integer' },
          description: "The rule's thresholds to try (checked against the rule).",
        },
      ),
    ),
  },
  REQUIRED,
);

function choiceFilter<T extends string>(choices: readonly T[], description: string) {
  return field<T>(
    (value) => {
      if (typeof value === 'string' && (choices as readonly string[]).includes(value)) return { ok: true, value: value as T };
      return { ok: false, message: `Select a valid choice. ${String(value).slice(0, 40)} is not one of the available choices.` };
    },
    { type: 'string', enum: [...choices], description },
  );
}

export const listFraudFlagsQuery = listQuery({
  ...pageQuery,
  rule: v.optional(choiceFilter<FraudRule>(FRAUD_RULES, 'Only flags of this rule.')),
  status: v.optional(choiceFilter<FraudFlagStatus>(FRAUD_FLAG_STATUSES, 'Only flags in this status (`open`: waiting for an operator).')),
  member: v.optional(v.pipe(v.string(), v.description("Only this member's flags (id)."))),
});

/** A flag's resolution (release, void, review): an optional note for the record. */
export const resolveFraudFlagBody = v.object({ note: v.optional(nullableText(500), null) }, REQUIRED);
