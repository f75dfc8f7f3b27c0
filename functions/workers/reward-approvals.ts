// Scheduled (hourly): queue one approve-due message per account; the reward worker approves the
// commissions whose hold has ended into their member's payout (shared/flows/lifecycle.ts).
import { startApprovals } from '../../shared/flows/lifecycle';
import { scheduledJob } from '../../shared/queue/worker';

export const handler = scheduledJob('reward-approvals', () => startApprovals());
