// Records the DynamoDB calls made through the store's clients, for the round-trip budgets
// (docs/design/architecture.md "Round-trip budgets") and the "no Scan, no COUNT" rule. `client.ts` attaches the recorder
// middleware to every client it creates; while nobody records, the middleware only checks one Set's
// size and calls through.
//
//   const rec = recordDynamoCalls();
//   await api('GET', '/v1/members/', { key });
//   rec.stop();
//   rec.depth(); // sequential round trips (calls started while no other call was in flight)
//   rec.calls;   // [{ command: 'Query', ... }, { command: 'GetItem', ... }, { command: 'BatchGetItem', ... }]
//
// The state lives on `globalThis` (one per Jest test file, one per Lambda container), so a module
// registry reset cannot split the recorders from the clients that report to them. The in-flight count
// behind `sequential` is process-wide: measure depth while nothing else in the process calls DynamoDB
// (no pollers running), or the other calls overlap and the depth reads low.
import type { DynamoDBClient, ServiceInputTypes, ServiceOutputTypes } from '@aws-sdk/client-dynamodb';
import type {
  HandlerExecutionContext,
  InitializeHandler,
  InitializeHandlerArguments,
  InitializeHandlerOutput,
  InitializeMiddleware,
} from '@smithy/types';

export interface DynamoCall {
  /** The low-level operation: 'GetItem', 'Query', 'BatchGetItem', 'TransactWriteItems', 'Scan', ... (DocumentClient commands report these too). */
  command: string;
  /** TableName; for batch and transaction operations the tables they touch, comma-separated. */
  table?: string;
  index?: string;
  /** The input's Select ('COUNT', 'ALL_ATTRIBUTES', ...), when given. */
  select?: string;
  startedAt: number;
  endedAt?: number;
  /** True when no other call was in flight when it started: sequential depth = number of calls with this flag. */
  sequential: boolean;
  /** Items the output returned: Query/Scan Count, BatchGetItem/TransactGetItems responses, GetItem 1 or 0. */
  itemsRead?: number;
  /** The error's name when the call failed (after the SDK's own retries). */
  error?: string;
  /** TransactWriteItems: how many items it writes. */
  writeItems?: number;
  /** Who made it, when the process names callers (the local pollers name the worker whose batch runs: setCallerLookup). */
  caller?: string;
}

export interface DynamoRecording {
  /** Calls in start order; a call's endedAt/itemsRead fill in when it completes. */
  calls: DynamoCall[];
  /** Sequential round trips: calls that started while no other call was in flight. */
  depth(): number;
  stop(): void;
}

export interface RecordOptions {
  /** Keep only the calls this returns true for (decided when the call starts, from its input). */
  filter?: (call: DynamoCall) => boolean;
}

interface Recorder {
  calls: DynamoCall[];
  filter: ((call: DynamoCall) => boolean) | undefined;
}

interface State {
  recorders: Set<Recorder>;
  inFlight: number;
  /** Names the caller of a call being recorded (infra/local/pollers.ts: the worker whose batch is running). */
  caller?: () => string | undefined;
}

const STATE_KEY = Symbol.for('refloop.dynamoCallRecorder');
const MIDDLEWARE_NAME = 'refloopCallRecorder';

function state(): State {
  const g = globalThis as typeof globalThis & { [STATE_KEY]?: State };
  g[STATE_KEY] ??= { recorders: new Set(), inFlight: 0 };
  return g[STATE_KEY];
}

/** Lets recorded calls name their caller (asked only while something records). */
export function setCallerLookup(lookup: (() => string | undefined) | undefined): void {
  state().caller = lookup;
}

/** Starts recording every call made from now until stop(). Several recordings may be active at once. */
export function recordDynamoCalls(options: RecordOptions = {}): DynamoRecording {
  const recorder: Recorder = { calls: [], filter: options.filter };
  const s = state();
  s.recorders.add(recorder);
  return {
    calls: recorder.calls,
    depth: () => recorder.calls.filter((c) => c.sequential).length,
    stop: () => {
      s.recorders.delete(recorder);
    },
  };
}

type Input = Record<string, unknown>;

function tablesOf(input: Input): string | undefined {
  if (typeof input.TableName === 'string') return input.TableName;
  if (input.RequestItems && typeof input.RequestItems === 'object') return Object.keys(input.RequestItems).join(',') || undefined;
  if (Array.isArray(input.TransactItems)) {
    const names = new Set<string>();
    for (const item of input.TransactItems as Record<string, { TableName?: unknown } | undefined>[]) {
      for (const op of Object.values(item)) if (typeof op?.TableName === 'string') names.add(op.TableName);
    }
    return [...names].join(',') || undefined;
  }
  return undefined;
}

function itemsReadFrom(command: string, output: unknown): number | undefined {
  if (!output || typeof output !== 'object') return undefined;
  const o = output as Record<string, unknown>;
  switch (command) {
    case 'GetItem':
      return o.Item ? 1 : 0;
    case 'Query':
    case 'Scan':
      return typeof o.Count === 'number' ? o.Count : Array.isArray(o.Items) ? o.Items.length : 0;
    case 'BatchGetItem':
      return Object.values((o.Responses ?? {}) as Record<string, unknown[]>).reduce(
        (n, items) => n + (Array.isArray(items) ? items.length : 0),
        0,
      );
    case 'TransactGetItems':
      return Array.isArray(o.Responses) ? o.Responses.filter((r) => r && typeof r === 'object' && (r as Input).Item).length : 0;
    default:
      return undefined;
  }
}

const recorderMiddleware: InitializeMiddleware<ServiceInputTypes, ServiceOutputTypes> =
  (next: InitializeHandler<ServiceInputTypes, ServiceOutputTypes>, context: HandlerExecutionContext) =>
  async (args: InitializeHandlerArguments<ServiceInputTypes>): Promise<InitializeHandlerOutput<ServiceOutputTypes>> => {
    const s = state();
    if (s.recorders.size === 0) return next(args);

    const input = (args.input ?? {}) as unknown as Input;
    const command = (context.commandName ?? 'Unknown').replace(/Command$/, '');
    const table = tablesOf(input);
    const call: DynamoCall = {
      command,
      ...(table !== undefined ? { table } : {}),
      ...(typeof input.IndexName === 'string' ? { index: input.IndexName } : {}),
      ...(typeof input.Select === 'string' ? { select: input.Select } : {}),
      startedAt: Date.now(),
      sequential: s.inFlight === 0,
    };
    if (command === 'TransactWriteItems' && Array.isArray(input.TransactItems)) call.writeItems = input.TransactItems.length;
    const caller = s.caller?.();
    if (caller !== undefined) call.caller = caller;
    for (const r of s.recorders) if (!r.filter || r.filter(call)) r.calls.push(call);

    s.inFlight++;
    try {
      const result = await next(args);
      const itemsRead = itemsReadFrom(command, result.output);
      if (itemsRead !== undefined) call.itemsRead = itemsRead;
      return result;
    } catch (err) {
      call.error = err instanceof Error ? err.name : 'Error';
      throw err;
    } finally {
      s.inFlight--;
      call.endedAt = Date.now();
    }
  };

/**
 * Adds the recorder to a client's middleware stack (a DocumentClient made `from` it shares the stack).
 * Step 'initialize' runs once per `send`, before the SDK's retries, so a retried request counts once.
 * Idempotent: adding it twice replaces the first.
 */
export function instrument(client: DynamoDBClient): void {
  client.middlewareStack.add(recorderMiddleware, {
    step: 'initialize',
    priority: 'high',
    name: MIDDLEWARE_NAME,
    override: true,
  });
}

/** A Scan, or a Query/Scan that only counts (Select COUNT): never in a request path (docs/design/architecture.md "Round-trip budgets"). */
export function isScanOrCount(call: DynamoCall): boolean {
  return call.command === 'Scan' || call.select === 'COUNT';
}

/** Items read by these calls (see DynamoCall.itemsRead). */
export function itemsRead(calls: readonly DynamoCall[]): number {
  return calls.reduce((n, c) => n + (c.itemsRead ?? 0), 0);
}

/** One line per call, for failure messages: `GetItem(refloop-test) seq items=1; Query(refloop-test/gsi1) parallel items=21`. */
export function describeCalls(calls: readonly DynamoCall[]): string {
  if (calls.length === 0) return '(no DynamoDB calls)';
  return calls
    .map((c) => {
      const where = [c.table, c.index].filter(Boolean).join('/');
      const parts = [`${c.command}(${where})`, c.sequential ? 'seq' : 'parallel'];
      if (c.select) parts.push(`select=${c.select}`);
      if (c.itemsRead !== undefined) parts.push(`items=${c.itemsRead}`);
      if (c.error) parts.push(`error=${c.error}`);
      if (c.endedAt === undefined) parts.push('unfinished');
      return parts.join(' ');
    })
    .join('; ');
}
