// PATCH /v1/account/ - change the account's name, email sender, embed origins or js referral mode.
import { apiHandler, ok } from '../../shared/http/handler';
import { updateAccountBody } from '../../shared/schemas/team';
import { accountSettings, updateAccountSettings } from '../../shared/store/account-settings';

export const handler = apiHandler({ body: updateAccountBody }, async ({ principal, body, baseUrl }) => {
  await updateAccountSettings(principal.accountId, body);
  return ok(await accountSettings(principal.accountId, baseUrl));
});
