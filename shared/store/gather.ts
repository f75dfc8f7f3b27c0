// A gathering point for writes made by the records of one SQS batch that run at once: each record's write
// waits until every record still expected has made its own or passed, then they go to DynamoDB together (one
// TransactWriteItems instead of one call each). The webhook delivery worker (../webhooks/delivery-writes.ts)
// and the member-emails worker (../email/email-writes.ts) use it. A flush that cannot write them together
// writes each on its own (oneByOne), so every caller gets its own answer.

export interface Waiting<I, O> {
  input: I;
  resolve: (out: O) => void;
  reject: (err: unknown) => void;
}

/**
 * A gathering point for one kind of write: calls wait until every participant still expected has called or
 * passed, then go out together (`flush` settles each one).
 */
export class Gather<I, O> {
  private waiting: Waiting<I, O>[] = [];
  constructor(
    private expected: number,
    private readonly flush: (calls: Waiting<I, O>[]) => Promise<void>,
  ) {}

  call(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      this.release();
    });
  }

  /** A participant that will not call (it skipped, failed, or is done). */
  pass(): void {
    this.expected--;
    this.release();
  }

  private release(): void {
    if (this.waiting.length === 0 || this.waiting.length < this.expected) return;
    const calls = this.waiting;
    this.waiting = [];
    this.expected -= calls.length;
    this.flush(calls).catch((err) => {
      for (const c of calls) c.reject(err);
    });
  }
}

/** Each call on its own, in parallel: its own answer or error. */
export async function oneByOne<I extends unknown[], O>(calls: Waiting<I, O>[], write: (...args: I) => Promise<O>): Promise<void> {
  await Promise.all(calls.map((c) => write(...c.input).then(c.resolve, c.reject)));
}

/**
 * The calls in ONE write (`all`) when there are several, each then answered `answer`; a single call, or all of
 * them when that write fails (it wrote nothing: a transaction), each on its own (`each`), which gives each its
 * own answer or error.
 */
export async function allOrEach<I extends unknown[], O>(
  calls: Waiting<I, O>[],
  all: (inputs: I[]) => Promise<unknown>,
  answer: O,
  each: (...args: I) => Promise<O>,
): Promise<void> {
  if (calls.length > 1) {
    try {
      await all(calls.map((c) => c.input));
      for (const c of calls) c.resolve(answer);
      return;
    } catch {
      // Nothing of it was written: each on its own says which ones hold.
    }
  }
  await oneByOne(calls, each);
}
