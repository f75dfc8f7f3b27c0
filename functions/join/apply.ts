// POST /join/v1/{account_slug}/{campaign_slug}/applications/ - the public application endpoint
// (docs/affiliates.md "Applying, and why every answer is the same"). No credential. Malformed input answers
// 400 in the API's field-error shape; anything else answers the same whatever happened (a new applicant, a
// known member, a pending application, a rate limit, a closed or unknown campaign): JSON
// `202 {"detail": "Check your email to continue."}`, or, for the page's own urlencoded form post, a 303 to
// the page's `?sent=1` (a 400 is then the page again with the errors beside their fields). Nothing is
// stored as an application before the email is confirmed.
import { htmlPage, applicationObject, isFormPost, seeOther } from '../../shared/affiliates/join-http';
import { JOIN_SCRIPT, joinPageBody } from '../../shared/affiliates/join-page';
import { JOIN_ACCEPTED } from '../../shared/domain/applications';
import { ValidationError } from '../../shared/domain/errors';
import { findProgramme, isOpen, joinPagePath, joinPostPath, submitApplication } from '../../shared/flows/applications';
import { clientIp } from '../../shared/http/client-ip';
import { jsonResult, publicHandler } from '../../shared/http/respond';

/** What the form showed, to show it again beside its errors (keys as the errors'). */
function formValues(raw: Record<string, unknown>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const key of ['email', 'name', 'country', 'payout_email']) if (typeof raw[key] === 'string') values[key] = raw[key] as string;
  if (raw.accepted_terms) values.accepted_terms = 'on';
  for (const [id, answer] of Object.entries((raw.answers ?? {}) as Record<string, unknown>))
    if (typeof answer === 'string') values[`answers.${id}`] = answer;
  return values;
}

export const handler = publicHandler(async (event) => {
  const accountSlug = event.pathParameters?.account_slug ?? '';
  const campaignSlug = event.pathParameters?.campaign_slug ?? '';
  const raw = applicationObject(event);
  if (!isFormPost(event)) {
    await submitApplication(await findProgramme(accountSlug, campaignSlug), raw, clientIp(event));
    return jsonResult(202, { detail: JOIN_ACCEPTED }, event);
  }
  const sent = seeOther(event, `${joinPagePath(accountSlug, campaignSlug)}?sent=1`);
  const programme = await findProgramme(accountSlug, campaignSlug);
  if (!isOpen(programme)) return sent;
  try {
    await submitApplication(programme, raw, clientIp(event));
    return sent;
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    const { account, campaign } = programme;
    const body = joinPageBody(account, campaign, joinPostPath(accountSlug, campaignSlug), { values: formValues(raw), errors: err.fields });
    return htmlPage(event, 400, { title: `Join the ${campaign.name} programme`, body, script: JOIN_SCRIPT }, account);
  }
});
