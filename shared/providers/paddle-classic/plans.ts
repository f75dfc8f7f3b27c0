// The subscription's `plan` object. Paddle alerts carry only `subscription_plan_id`, so the plan's
// name, interval and price come from the vendor API's plan list, cached in the table for a day.
// If the provider cannot be asked, a stale cached plan, then the subscription's current plan, then a
// partial plan (interval null) is used; the background sync fills it in later. A webhook is never
// held back (and never ends in the DLQ) because the plan lookup failed.
import { planDescriptor, decimalToCents } from '../../domain/billing';
import { formatCents } from '../../domain/money';
import type { Plan } from '../../domain/models';
import { getCachedPlan, putCachedPlan, type CachedPlan } from '../../store/subscriptions';
import { ProviderApiError, ProviderUnavailableError, type PaddleClient } from './client';
import { log } from '../../log';

function money(value: string | number | undefined | null): string | null {
  if (value === undefined || value === null) return null;
  const cents = decimalToCents(String(value));
  return cents === null ? null : formatCents(cents);
}

export function planFrom(cached: CachedPlan, currency: string, unitPrice: string | null): Plan {
  const amount = money(cached.recurring_price[currency]) ?? unitPrice ?? '0.00';
  const interval = cached.billing_type || null;
  const frequency = Number.isInteger(cached.billing_period) ? cached.billing_period : null;
  return {
    id: cached.id,
    name: cached.name,
    amount,
    currency,
    interval,
    frequency,
    descriptor: planDescriptor(amount, currency, interval, frequency),
  };
}

export interface PlanRequest {
  accountId: string;
  planId: number;
  currency: string;
  unitPrice: string | null;
  /** Name to use if the plan cannot be looked up (payment alerts carry `plan_name`). */
  planName?: string | null;
  /** The subscription's current plan, kept if the provider cannot be asked. */
  current?: Plan | null;
}

export async function resolvePlan(client: PaddleClient | null, req: PlanRequest): Promise<Plan> {
  const cached = await getCachedPlan(req.accountId, req.planId);
  if (cached && !cached.stale) return planFrom(cached.plan, req.currency, req.unitPrice);
  if (client) {
    try {
      const fresh = await client.getPlan(req.planId);
      if (fresh) {
        const stored = await putCachedPlan(req.accountId, {
          id: Number(fresh.id),
          name: String(fresh.name ?? ''),
          billing_type: String(fresh.billing_type ?? ''),
          billing_period: Number(fresh.billing_period),
          recurring_price: fresh.recurring_price ?? {},
        });
        return planFrom(stored, req.currency, req.unitPrice);
      }
    } catch (err) {
      if (!(err instanceof ProviderUnavailableError || err instanceof ProviderApiError)) throw err;
      log('warn', 'plan lookup failed; using a fallback', { account_id: req.accountId, plan_id: req.planId, error: err.name });
    }
  }
  if (cached) return planFrom(cached.plan, req.currency, req.unitPrice);
  if (req.current && req.current.id === req.planId && req.current.currency === req.currency) return req.current;
  const amount = req.unitPrice ?? '0.00';
  return { id: req.planId, name: req.planName ?? '', amount, currency: req.currency, interval: null, frequency: null, descriptor: null };
}
