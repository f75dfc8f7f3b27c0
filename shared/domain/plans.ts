// Plans and their campaign limits (docs/design/api-contract.md "Accounts and plans").

export const PLANS = ['starter', 'small', 'regular', 'unlimited'] as const;
export type Plan = (typeof PLANS)[number];

const CAMPAIGN_LIMITS: Record<Plan, number | null> = { starter: 1, small: 3, regular: 10, unlimited: null };

export function isPlan(value: unknown): value is Plan {
  return typeof value === 'string' && (PLANS as readonly string[]).includes(value);
}

/** How many campaigns the plan allows; null = no limit. */
export function campaignLimit(plan: Plan): number | null {
  return CAMPAIGN_LIMITS[plan];
}

/**
 * Default request rates of the /v1/ API per API key, by plan (requests per second, averaged over a
 * 10-second window, so a burst of up to ten times the rate fits in one window). API_RATE_LIMITS overrides.
 */
export const DEFAULT_API_RATES: Readonly<Record<Plan, number>> = Object.freeze({ starter: 25, small: 50, regular: 50, unlimited: 100 });

export function campaignLimitMessage(plan: Plan): string {
  const n = campaignLimit(plan);
  const title = plan.charAt(0).toUpperCase() + plan.slice(1);
  return `The ${title} plan allows ${n} campaign(s); upgrade to add more.`;
}
