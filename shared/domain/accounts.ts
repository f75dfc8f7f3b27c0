// What an account chooses that code outside the store reads too (the request schemas, the operator CLI),
// kept apart from shared/store/accounts.ts so that reading it does not bring the DynamoDB client along.

/**
 * What a publishable key may do with /js/v1/referrals/ (docs/browser.md "Referrals from the browser"): `open` creates
 * the referral (the default); `confirm` creates nothing (the app's backend creates it with its secret key);
 * `off` refuses with 403. Kept on the account and copied onto its publishable key item (auth reads only that).
 */
export type JsReferralMode = 'open' | 'confirm' | 'off';
export const JS_REFERRAL_MODES: readonly JsReferralMode[] = ['open', 'confirm', 'off'];
export const isJsReferralMode = (value: unknown): value is JsReferralMode => (JS_REFERRAL_MODES as readonly unknown[]).includes(value);
