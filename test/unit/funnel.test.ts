// The Overview's funnel (web/src/dashboard/pages/funnel.ts, issue 23 item 8): referrals made through the API have
// no click, so the counts do not nest; the page must never show a percentage above 100% ("400% of
// clicks", "Click to conversion: 300%") and must say why it shows none.
import fc from 'fast-check';
import { funnelText, share } from '../../web/src/dashboard/pages/funnel';

/** Every percentage in a text, as a number (the browser's locale formats them; Node's default is en-US). */
const percentages = (text: string | null) =>
  [...(text ?? '').matchAll(/(\d[\d,.]*)\s*%/g)].map((m) => Number((m[1] as string).replace(/,/g, '')));

describe('the funnel on the Overview', () => {
  it('the reported case: 1 click, 4 referrals through the API, 3 conversions: no rate against clicks, and why', () => {
    const text = funnelText({ clicks: 1, referrals: 4, conversions: 3 });
    expect(text).toEqual({
      referrals: 'At least 3 without a tracked click',
      conversions: '75% of referrals',
      total: '—',
      note: 'Referrals made through the API or a coupon, or from a page without the script tag, have no click: rates against clicks are not shown.',
    });
  });

  it('counts that nest show their shares', () => {
    expect(funnelText({ clicks: 200, referrals: 50, conversions: 10 })).toEqual({
      referrals: '25% of clicks',
      conversions: '20% of referrals',
      total: '5%',
      note: null,
    });
    expect(funnelText({ clicks: 3, referrals: 0, conversions: 0 })).toEqual({
      referrals: '0% of clicks',
      conversions: null,
      total: '0%',
      note: null,
    });
  });

  it('no clicks at all, or more conversions than referrals in the period, are said in words', () => {
    expect(funnelText({ clicks: 0, referrals: 5, conversions: 2 })).toMatchObject({ referrals: 'None from a tracked click', total: '—' });
    expect(funnelText({ clicks: 10, referrals: 2, conversions: 5 })).toMatchObject({
      referrals: '20% of clicks',
      conversions: 'Includes referrals from before this period',
      total: '50%',
    });
  });

  it('never shows a percentage above 100%, whatever the counts', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), fc.nat(10_000), (clicks, referrals, conversions) => {
        const text = funnelText({ clicks, referrals, conversions });
        for (const line of [text.referrals, text.conversions, text.total, text.note]) {
          for (const p of percentages(line)) expect(p).toBeLessThanOrEqual(100);
        }
        // A rate against clicks only while every referral can have come from a click.
        if (referrals > clicks) expect([text.total, text.note === null]).toEqual(['—', false]);
      }),
      { numRuns: 2000 },
    );
  });

  it('share() is a share or nothing', () => {
    expect(share(4, 1)).toBeNull();
    expect(share(1, 0)).toBeNull();
    expect(share(1, 4)).toBe('25%');
    expect(share(4, 4)).toBe('100%');
  });
});
