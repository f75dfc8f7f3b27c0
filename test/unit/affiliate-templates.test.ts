// The emails to affiliates and applicants (shared/email/affiliate-templates.ts): what each says, which
// carry an unsubscribe link, that a rejection never carries its reason, that the referred user is never
// named, and that everything shown in the HTML is escaped.
import {
  AFFILIATE_TEMPLATES,
  applicationApprovedEmail,
  applicationConfirmEmail,
  applicationExistsEmail,
  applicationRejectedEmail,
  isTransactional,
  memberExistsEmail,
  monthName,
  monthlySummaryEmail,
  newReferralEmail,
  payoutSentEmail,
  portalLoginEmail,
  sampleAffiliateEmails,
} from '../../shared/email/affiliate-templates';
import { affiliateEmailKey } from '../../shared/email/affiliate-emails';
import { previousMonth } from '../../shared/email/affiliate-summary';

const ctx = { programme: 'Acme Partners', senderName: 'Acme', firstName: 'Alex' };
const UNSUB = 'https://api.test/unsubscribe/tok/';
const LINK = 'https://api.test/portal/acme/login/#token=abc';

describe('affiliate email templates', () => {
  it('lists every template of the queue message once, login and confirmation ones transactional', () => {
    expect(AFFILIATE_TEMPLATES.map((t) => t.name)).toEqual([
      'application-confirm',
      'application-exists',
      'member-exists',
      'application-approved',
      'application-rejected',
      'portal-login',
      'payout-sent',
      'new-referral',
      'monthly-summary',
    ]);
    const transactional = AFFILIATE_TEMPLATES.filter((t) => isTransactional(t.name)).map((t) => t.name);
    expect(transactional).toEqual(['application-confirm', 'application-exists', 'member-exists', 'application-approved', 'portal-login']);
    expect(AFFILIATE_TEMPLATES.filter((t) => t.setting).map((t) => [t.name, t.setting])).toEqual([
      ['new-referral', 'new_referral'],
      ['monthly-summary', 'monthly_summary'],
    ]);
  });

  it('the confirmation: the programme, the link in text and HTML, no unsubscribe', () => {
    const e = applicationConfirmEmail({ ...ctx, firstName: null }, { url: 'https://api.test/join/confirm/t1/' });
    expect(e.subject).toBe('Confirm your email to apply to Acme Partners');
    expect(e.text).toContain('Hi there,');
    expect(e.text).toContain('Confirm my email: https://api.test/join/confirm/t1/');
    expect(e.html).toContain('<a href="https://api.test/join/confirm/t1/"');
    expect(e.text).not.toMatch(/unsubscribe/i);
    expect(e.html).not.toMatch(/unsubscribe/i);
  });

  it.each([
    ['member-exists', memberExistsEmail(ctx, { url: LINK }), 'You are already in Acme Partners'],
    ['application-approved', applicationApprovedEmail(ctx, { url: LINK }), 'Welcome to Acme Partners'],
    ['portal-login', portalLoginEmail(ctx, { url: LINK }), 'Your login link for Acme Partners'],
  ])('%s carries the login link and no unsubscribe', (_, e, subject) => {
    expect(e.subject).toBe(subject);
    expect(e.text).toContain('Hi Alex,');
    expect(e.text).toContain(`Log in to your portal: ${LINK}`);
    expect(e.html).toContain(`href="${LINK}"`);
    expect(e.text).not.toMatch(/unsubscribe/i);
    expect(e.html).not.toMatch(/unsubscribe/i);
  });

  it("the welcome names the portal's login page for later", () => {
    const e = applicationApprovedEmail(ctx, { url: LINK, loginPageUrl: 'https://api.test/portal/acme/login/' });
    expect(e.text).toContain("Later, ask for a new one on your portal's login page: https://api.test/portal/acme/login/");
    expect(e.html).toContain('https://api.test/portal/acme/login/');
  });

  it('already applied: says it is being reviewed, no link', () => {
    const e = applicationExistsEmail({ ...ctx, firstName: null });
    expect(e.subject).toBe('Your application to Acme Partners');
    expect(e.text).toContain('your application is being reviewed');
    expect(e.html).not.toContain('<a ');
  });

  it('a rejection is neutral, with its unsubscribe link, and never a reason', () => {
    const e = applicationRejectedEmail({ ...ctx, firstName: null }, { unsubscribeUrl: UNSUB });
    expect(e.subject).toBe('Your application to Acme Partners');
    expect(e.text).toContain('not able to accept it at this time');
    expect(e.text).not.toMatch(/reason|because of|fraud/i);
    expect(e.text).toContain(`Unsubscribe from these emails: ${UNSUB}`);
    expect(e.html).toContain(`<a href="${UNSUB}">Unsubscribe from these emails</a>`);
    // The input has no place for a reason at all.
    expect(applicationRejectedEmail.length).toBe(2);
  });

  it('payout sent: amount, currency, where, reference, and the unsubscribe link', () => {
    const e = payoutSentEmail(ctx, {
      amount: 12345,
      currency: 'EUR',
      destination: 'alex@pay.example',
      reference: 'WISE-9',
      unsubscribeUrl: UNSUB,
    });
    expect(e.subject).toBe('Your payout of 123.45 EUR is on its way');
    expect(e.text).toContain('We have sent you 123.45 EUR, to alex@pay.example.');
    expect(e.text).toContain('Its reference: WISE-9.');
    expect(e.text).toContain(UNSUB);
    expect(e.html).toContain(`href="${UNSUB}"`);
    const nowhere = payoutSentEmail(ctx, { amount: 500, currency: 'USD', destination: null, unsubscribeUrl: UNSUB });
    expect(nowhere.text).toContain('We have sent you 5.00 USD.');
    expect(nowhere.text).not.toContain('reference');
  });

  it('new referral never names the referred user, and has the unsubscribe link', () => {
    const e = newReferralEmail(ctx, { memberCode: 'ALEX10', unsubscribeUrl: UNSUB });
    expect(e.subject).toBe('Someone signed up through your link');
    expect(e.text).toContain('someone has just signed up through your Acme Partners link (code ALEX10)');
    expect(e.html).toContain(`href="${UNSUB}"`);
  });

  it('the monthly summary: the month by name, counts in words, earnings per currency and kind', () => {
    const e = monthlySummaryEmail(ctx, {
      month: '2026-10',
      clicks: 1,
      referrals: 2,
      conversions: 0,
      earnings: [
        { currency: 'EUR', commission: 1000, credit: 0 },
        { currency: 'USD', commission: 250, credit: 500 },
      ],
      unsubscribeUrl: UNSUB,
    });
    expect(e.subject).toBe('Your October 2026 with Acme Partners');
    expect(e.text).toContain('1 click, 2 referrals and 0 conversions.');
    expect(e.text).toContain('You earned 10.00 EUR in commission and 2.50 USD in commission and 5.00 USD in credit.');
    expect(e.text).toContain(UNSUB);
    const empty = monthlySummaryEmail(ctx, { month: '2026-01', clicks: 3, referrals: 0, conversions: 0, earnings: [] });
    expect(empty.text).toContain('No earnings this month yet.');
    expect(monthName('2026-12')).toBe('December 2026');
  });

  it('escapes every shown value in the HTML part (names, programme, links)', () => {
    const evil = { programme: '<script>alert(1)</script>', senderName: 'A & "B"', firstName: '<img src=x onerror=alert(1)>' };
    const url = 'https://api.test/x?a=1&b="><script>';
    const all = [
      applicationConfirmEmail(evil, { url }),
      applicationExistsEmail(evil),
      memberExistsEmail(evil, { url }),
      applicationApprovedEmail(evil, { url }),
      applicationRejectedEmail(evil, { unsubscribeUrl: url }),
      portalLoginEmail(evil, { url }),
      payoutSentEmail(evil, { amount: 1, currency: 'USD', destination: '<b>x</b>@example.com', unsubscribeUrl: url }),
      newReferralEmail(evil, { memberCode: '<i>', unsubscribeUrl: url }),
      monthlySummaryEmail(evil, { month: '2026-02', clicks: 1, referrals: 0, conversions: 0, earnings: [], unsubscribeUrl: url }),
    ];
    for (const e of all) {
      expect(e.html).not.toContain('<script>');
      expect(e.html).not.toContain('<img');
      expect(e.html).not.toContain('<b>');
      expect(e.html).not.toContain('<i>');
      expect(e.html).toContain('&lt;script&gt;');
      expect(e.html).toContain('A &amp; &quot;B&quot;');
    }
    expect(all[2]!.html).toContain('href="https://api.test/x?a=1&amp;b=&quot;&gt;&lt;script&gt;"');
  });

  it('the previews: every template with sample data, unsubscribe only on the non-transactional ones', () => {
    const samples = sampleAffiliateEmails({ programme: 'Acme', senderName: 'Acme', baseUrl: 'https://api.test' });
    expect(samples.map((s) => s.name)).toEqual(AFFILIATE_TEMPLATES.map((t) => t.name));
    for (const s of samples) {
      expect(s.subject).not.toBe('');
      expect(s.html.startsWith('<!doctype html>')).toBe(true);
      expect({ name: s.name, unsubscribe: /Unsubscribe from these emails/.test(s.text) }).toEqual({
        name: s.name,
        unsubscribe: !s.transactional,
      });
    }
  });

  it('exactly-once keys: the message key, else one derived from what the email is about', () => {
    const base = { kind: 'affiliate-email' as const, account_id: 'a' };
    expect(affiliateEmailKey({ ...base, template: 'payout-sent', payout_id: 'po_1' })).toBe('payout-sent-po_1');
    expect(affiliateEmailKey({ ...base, template: 'payout-sent', payout_id: 'po_1', key: 'own' })).toBe('own');
    expect(affiliateEmailKey({ ...base, template: 'new-referral', referral_id: 'r1' })).toBe('new-referral-r1');
    expect(affiliateEmailKey({ ...base, template: 'monthly-summary', member_id: 'm1', month: '2026-10' })).toBe(
      'monthly-summary-m1-2026-10',
    );
    expect(affiliateEmailKey({ ...base, template: 'application-approved', application_id: 'app_1' })).toBe('approved-app_1');
    expect(affiliateEmailKey({ ...base, template: 'application-rejected', application_id: 'app_1' })).toBe('rejected-app_1');
    expect(affiliateEmailKey({ ...base, template: 'portal-login', email: 'x@example.com' })).toBeNull();
  });

  it('the summary job covers the month before (UTC), across a year', () => {
    expect(previousMonth(Date.UTC(2026, 0, 1, 0, 5))).toBe('2025-12');
    expect(previousMonth(Date.UTC(2026, 10, 1, 23, 59))).toBe('2026-10');
  });
});
