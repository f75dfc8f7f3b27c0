// GET /v1/account/ - the account's settings: plan, publishable key and script tag, email sender, embed
// origins, js referral mode and the provider connection's public part (never a secret).
import { apiHandler, ok } from '../../shared/http/handler';
import { accountSettings } from '../../shared/store/account-settings';

export const handler = apiHandler({}, async ({ principal, baseUrl }) => ok(await accountSettings(principal.accountId, baseUrl)));
