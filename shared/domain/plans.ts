// Plans and their campaign limits (API-CONTRACT "Accounts and plans").

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

export function campaignLimitMessage(plan: Plan): string {
  const n = campaignLimit(plan);
  const title = plan.charAt(0).toUpperCase() + plan.slice(1);
  return `The ${title} plan allows ${n} campaign(s); upgrade to add more.`;
}
