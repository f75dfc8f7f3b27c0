// The words of the Overview's funnel (overview.tsx), kept apart so that a unit test can hold every
// combination of counts to the rule (test/unit/funnel.test.ts): a percentage is shown only where it is a
// share, a part no larger than its whole, so the page never says "400% of clicks".
//
// Why the counts do not nest: `link_clicks` counts the clicks the script tag recorded, `referrals` every
// referral of the period (made through the API, the browser script or a coupon, with or without a click),
// and `conversions` the conversions of the period, some of referrals made before it. Referrals are not
// tied to the click they came from, so a rate against clicks is given only while the referrals fit within
// the clicks; otherwise the funnel says how many at least came without a tracked click (docs/dashboard.md).
import { formatCount, formatPercent } from '../../ui/format';

export interface FunnelCounts {
  clicks: number;
  referrals: number;
  conversions: number;
}

export interface FunnelText {
  /** Under the referrals bar: their share of clicks, or why there is none. */
  referrals: string | null;
  /** Under the conversions bar: their share of referrals, or why there is none. */
  conversions: string | null;
  /** "Click to conversion": a percentage, or '—' where it would not be one. */
  total: string;
  /** Said under the funnel when the referrals outnumber the clicks. */
  note: string | null;
}

/** `part / whole` as a percentage, only when it is a share (0 < whole, part <= whole). */
export function share(part: number, whole: number): string | null {
  return whole > 0 && part >= 0 && part <= whole ? formatPercent(part / whole) : null;
}

export function funnelText({ clicks, referrals, conversions }: FunnelCounts): FunnelText {
  const withoutClick = Math.max(0, referrals - clicks);
  const referralRate =
    withoutClick === 0
      ? clicks > 0
        ? `${share(referrals, clicks)} of clicks`
        : null
      : clicks === 0
        ? 'None from a tracked click'
        : `At least ${formatCount(withoutClick)} without a tracked click`;
  const conversionRate =
    referrals === 0
      ? null
      : conversions > referrals
        ? 'Includes referrals from before this period'
        : `${share(conversions, referrals)} of referrals`;
  return {
    referrals: referralRate,
    conversions: conversionRate,
    total: withoutClick === 0 ? (share(conversions, clicks) ?? '—') : '—',
    note:
      withoutClick > 0
        ? 'Referrals made through the API or a coupon, or from a page without the script tag, have no click: rates against clicks are not shown.'
        : null,
  };
}
