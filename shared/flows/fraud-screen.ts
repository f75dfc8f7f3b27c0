// STUB (issue 27 seam): the fraud screening of one committed event (docs/fraud.md "When the rules run").
import type { FraudScreenMessage } from '../queue/queues';

export async function screenEvent(_message: FraudScreenMessage): Promise<void> {}
