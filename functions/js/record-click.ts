// POST /js/v1/clicks/ - count a click on a member's link (publishable key; once per visitor per 24 h, at
// most MAX_VISITORS_PER_IP visitors per IP per link per day), through its sub-id when `sub` is given.
// The answer is the same whether or not the code is a member's, so codes cannot be probed through it. It
// carries the account's attribution (`model`, `days`), which the browser script follows (docs/attribution.md).
import { header } from '../../shared/http/body';
import { jsHandler } from '../../shared/http/js';
import { ipHash, visitorHash } from '../../shared/domain/visitors';
import { clickBody } from '../../shared/schemas/js';
import { recordClick } from '../../shared/store/clicks';

export const handler = jsHandler({ body: clickBody }, async ({ principal, body, clientIp, event }) => {
  const visitor = visitorHash({ visitorId: body.visitor_id, ip: clientIp, userAgent: header(event, 'user-agent') ?? '' });
  const { attribution } = await recordClick(principal.accountId, body.code, visitor, ipHash(clientIp), body.sub);
  return { status: 200, body: { recorded: true, attribution } };
});
