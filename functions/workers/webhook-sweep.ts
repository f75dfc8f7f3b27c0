// Scheduled every minute: re-queues outbox events whose hand-off did not happen and deliveries that are due.
import { sweep } from '../../shared/webhooks/sweep';

export const handler = async (): Promise<{ events: number; deliveries: number }> => sweep();
