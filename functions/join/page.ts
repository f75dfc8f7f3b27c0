// GET /join/{account_slug}/{campaign_slug}/ - a campaign's public page
// (docs/affiliates.md "The sign-up page"): its terms in words and the application form, in the account's
// theme. No credential. An unknown account or campaign, or a campaign closed to applications, answers a
// 404 page. `?sent=1` (where the form's no-JS post lands) shows "Check your email" whatever the campaign,
// like the endpoint's answer.
import { JOIN_SCRIPT, joinPageBody, NOT_FOUND_TITLE, notFoundBody, SENT_TITLE, sentBody } from '../../shared/affiliates/join-page';
import { htmlPage } from '../../shared/affiliates/join-http';
import { findProgramme, isOpen, joinPostPath } from '../../shared/flows/applications';
import { publicHandler } from '../../shared/http/respond';
import { findAccountBySlug } from '../../shared/store/slugs';

export const handler = publicHandler(async (event) => {
  const accountSlug = event.pathParameters?.account_slug ?? '';
  const campaignSlug = event.pathParameters?.campaign_slug ?? '';
  if (event.queryStringParameters?.sent !== undefined) {
    const account = (await findAccountBySlug(accountSlug))?.account ?? null;
    return htmlPage(event, 200, { title: SENT_TITLE, body: sentBody(account) }, account);
  }
  const programme = await findProgramme(accountSlug, campaignSlug);
  if (!isOpen(programme)) return htmlPage(event, 404, { title: NOT_FOUND_TITLE, body: notFoundBody() }, null);
  const { account, campaign } = programme;
  return htmlPage(
    event,
    200,
    {
      title: `Join the ${campaign.name} programme`,
      body: joinPageBody(account, campaign, joinPostPath(accountSlug, campaignSlug)),
      script: JOIN_SCRIPT,
    },
    account,
  );
});
