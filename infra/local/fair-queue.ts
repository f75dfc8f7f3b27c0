// Fair queues for the local SQS (./sqs.ts). AWS SQS serves a standard queue's messages with a MessageGroupId
// fairly across groups (fair queues: a group with many messages in flight is served after the others), so a
// quiet account's message is not stuck behind a noisy account's backlog. local-aws-sqs serves every standard
// queue in arrival order: a 20,000-message backlog of one account would be received before another account's
// later message. This layer gives the local queues the same fairness, inside the queue server's process:
//
// - a message sent with a MessageGroupId is answered at once (its MessageId and MD5s, built by the queue's own
//   record maker, so the SDK's checksum checks pass) and held in its group's FIFO list, outside the queue;
// - held messages are fed into the real queue so that it holds at most `window` visible messages: each time
//   from the group with the fewest messages in the queue (visible or in flight), the least recently fed among
//   equals (round robin). A feed follows every send, receive, delete and DLQ move, and a short timer;
// - a fed message is the same message: same MessageId and body, its SentTimestamp the send's (its age counts
//   the wait), and from then on every SQS behaviour is the queue's own (visibility timeout, receive count,
//   redrive to the DLQ with its group, deletes);
// - GetQueueAttributes counts held messages as waiting (ApproximateNumberOfMessages), and a purge drops them.
//
// Messages without a group (sent before the queues had groups, or to a queue that is no tenant's) go straight
// into the queue, as before. So a quiet group's message waits behind at most `window` visible messages (plus
// those of a noisy group that come back after a failure), whatever the noisy group's backlog.
import type { createRequestHandler } from 'local-aws-sqs';

type LocalQueue = ReturnType<typeof createRequestHandler>['service']['Queues'][number];
type SendInput = Record<string, unknown> & { MessageGroupId?: unknown; DelaySeconds?: unknown };
type QueueRecord = { MessageId: string; attributes: Record<string, string> };
type RecordMaker = (input: Record<string, unknown>) => [QueueRecord, string | undefined];

export interface FairQueueOptions {
  /** Visible messages the real queue holds at most while messages are held (at least 1). */
  window: number;
  /** Called after held messages were fed (pollers waiting for a message are woken). */
  onFeed?: () => void;
  /** Milliseconds between feeds that no queue operation started (visibility timeouts that ended, retention); default 100. */
  tickMs?: number;
}

export interface FairQueue {
  /** Messages accepted and not yet in the queue. */
  held(): number;
  /** Messages of each group in the queue (visible or in flight) and held, for tests and the bench. */
  groups(): Record<string, { inQueue: number; held: number }>;
  /** Feeds what the window allows now. */
  feed(): void;
  stop(): void;
}

/** A FIFO list with O(1) shift (a noisy group may hold tens of thousands). */
class Fifo<T> {
  private items: T[] = [];
  private head = 0;
  get size(): number {
    return this.items.length - this.head;
  }
  push(item: T): void {
    this.items.push(item);
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined as T;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}

interface Held {
  input: SendInput;
  id: string;
  sentAt: string;
}

interface Group {
  held: Fifo<Held>;
  /** Fed and not yet deleted or moved to the DLQ. */
  inQueue: number;
  /** Order of the last feed (round robin among groups with as many in the queue). */
  lastFed: number;
}

/** The MessageId a receipt handle of local-aws-sqs names (a UUID, then the JSON it was made from). */
export function messageIdOfHandle(handle: string): string | undefined {
  try {
    const text = Buffer.from(handle, 'base64').toString('utf8');
    const id = (JSON.parse(text.slice(text.indexOf('{'))) as { MessageId?: unknown }).MessageId;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Makes a local-aws-sqs standard queue fair across message groups (see the top of this file). `deadLetterQueue`
 * is the queue its redrive policy moves messages to: a move frees the message's place at once.
 */
export function makeFair(queue: LocalQueue, deadLetterQueue: LocalQueue | undefined, options: FairQueueOptions): FairQueue {
  const window = Math.max(1, Math.floor(options.window));
  const groups = new Map<string, Group>();
  /** Messages fed into the queue and still there -> their group. */
  const fedGroup = new Map<string, string>();
  let heldCount = 0;
  let feeds = 0;
  let feedQueued = false;

  const setRecord = queue.setRecord;
  const receive = queue.receive.bind(queue);
  const remove = queue.delete.bind(queue);
  const clearRecords = queue.clearRecords.bind(queue);
  const getAttributes = queue.getAttributes.bind(queue);
  const createRecord = (queue.constructor as unknown as { createRecord: RecordMaker }).createRecord;

  /** Messages in the queue waiting to be received (visible, or about to be: see below). */
  const visibleInQueue = (): number => {
    const a = getAttributes([
      'ApproximateNumberOfMessages',
      'ApproximateNumberOfMessagesNotVisible',
      'ApproximateNumberOfMessagesDelayed',
    ]) as Record<string, string>;
    // local-aws-sqs counts in ApproximateNumberOfMessages every message not delayed, in flight ones included;
    // and every new message is "delayed" until a timer of 0 ms fires: a message fed a moment ago counts too.
    return (
      Number(a.ApproximateNumberOfMessages ?? 0) -
      Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
      Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
    );
  };

  /** The group to feed next: fewest in the queue, then least recently fed. */
  const pick = (): [string, Group] | undefined => {
    let best: [string, Group] | undefined;
    for (const entry of groups) {
      const g = entry[1];
      if (g.held.size === 0) continue;
      if (!best || g.inQueue < best[1].inQueue || (g.inQueue === best[1].inQueue && g.lastFed < best[1].lastFed)) best = entry;
    }
    return best;
  };

  const forgetIfIdle = (name: string, g: Group) => {
    if (g.held.size === 0 && g.inQueue === 0) groups.delete(name);
  };

  const feed = (): void => {
    if (heldCount === 0) return;
    let visible = visibleInQueue();
    let fed = 0;
    while (heldCount > 0 && visible < window) {
      const next = pick();
      if (!next) break;
      const [name, g] = next;
      const m = g.held.shift() as Held;
      heldCount--;
      const entry = setRecord(m.input, m.id) as { record: QueueRecord };
      entry.record.attributes.SentTimestamp = m.sentAt;
      g.inQueue++;
      g.lastFed = ++feeds;
      fedGroup.set(m.id, name);
      visible++;
      fed++;
    }
    if (fed > 0) options.onFeed?.();
  };

  /** Feeds once the current operation is done (a batch's ten sends are all held before any is fed). */
  const feedSoon = (): void => {
    if (feedQueued || heldCount === 0) return;
    feedQueued = true;
    queueMicrotask(() => {
      feedQueued = false;
      feed();
    });
  };

  /** A fed message left the queue (deleted, or moved to the DLQ). */
  const left = (id: string): void => {
    const name = fedGroup.get(id);
    if (name === undefined) return;
    fedGroup.delete(id);
    const g = groups.get(name);
    if (!g) return;
    g.inQueue = Math.max(0, g.inQueue - 1);
    forgetIfIdle(name, g);
    feedSoon();
  };

  queue.setRecord = (input: SendInput, messageId?: string) => {
    const group = input.MessageGroupId;
    // A delayed message keeps the queue's own timing (nothing of ours sends one).
    if (typeof group !== 'string' || group === '' || queue.FifoQueue || Number(input.DelaySeconds ?? 0) > 0)
      return setRecord(input, messageId);
    const [record, md5OfSystemAttributes] = createRecord({
      MessageId: messageId,
      MessageBody: input.MessageBody,
      MessageAttributes: input.MessageAttributes,
      MessageSystemAttributes: input.MessageSystemAttributes,
      MessageGroupId: group,
    });
    let g = groups.get(group);
    if (!g) {
      g = { held: new Fifo<Held>(), inQueue: 0, lastFed: 0 };
      groups.set(group, g);
    }
    g.held.push({ input, id: record.MessageId, sentAt: record.attributes.SentTimestamp ?? String(Date.now()) });
    heldCount++;
    feedSoon();
    return { record, ...(md5OfSystemAttributes ? { MD5OfMessageSystemAttributes: md5OfSystemAttributes } : {}) };
  };

  queue.receive = async (input: Parameters<LocalQueue['receive']>[0]) => {
    feed();
    try {
      return await receive(input);
    } finally {
      feedSoon();
    }
  };

  queue.delete = (receiptHandle: string) => {
    const out = remove(receiptHandle);
    const id = messageIdOfHandle(receiptHandle);
    if (id !== undefined) left(id);
    return out;
  };

  queue.clearRecords = () => {
    clearRecords();
    groups.clear();
    fedGroup.clear();
    heldCount = 0;
  };

  queue.getAttributes = (names?: string[]) => {
    const out = getAttributes(names) as Record<string, string> | undefined;
    if (out && heldCount > 0 && out.ApproximateNumberOfMessages !== undefined)
      out.ApproximateNumberOfMessages = String(Number(out.ApproximateNumberOfMessages) + heldCount);
    return out;
  };

  // The queue's redrive moves a message by setRecord(input, its MessageId) on the DLQ: its place is free.
  if (deadLetterQueue) {
    const dlqSetRecord = deadLetterQueue.setRecord;
    deadLetterQueue.setRecord = (input: SendInput, messageId?: string) => {
      const out = dlqSetRecord(input, messageId);
      if (messageId !== undefined) left(messageId);
      return out;
    };
  }

  const timer = setInterval(feed, options.tickMs ?? 100);
  timer.unref();

  return {
    held: () => heldCount,
    groups: () =>
      Object.fromEntries(
        [...new Set([...groups.keys(), ...fedGroup.values()])].map((name) => {
          const g = groups.get(name);
          return [name, { inQueue: g?.inQueue ?? 0, held: g?.held.size ?? 0 }];
        }),
      ),
    feed,
    stop: () => clearInterval(timer),
  };
}
