// A write-rate accountant: what DynamoDB would charge, per partition key and per item, per second.
//
// It is a middleware on the store's client (shared/store/client.ts: rawClient(), whose stack the
// DocumentClient of db() shares), so the application code runs unchanged. Every write that succeeds
// (PutItem, UpdateItem, DeleteItem, BatchWriteItem, TransactWriteItems) is recorded with:
// - its write units as DynamoDB counts them: ceil(item size / 1 KB), at least 1, where the size is the sum
//   of the attribute names' and values' lengths (DynamoDB's rules: strings and binaries their UTF-8 /
//   byte length, a number about one byte per two significant digits plus one, booleans and nulls 1, a map
//   or list 3 plus its elements plus 1 each). A Put's size is its item's. An Update's is the item after it
//   (read back once when the run is settled: counters and report buckets never shrink, so the final item
//   is an upper bound); a Delete's is unknown and counted 1. Inside a transaction every unit counts twice.
// - the GSI writes it causes: the indexes project ALL attributes, so an item carrying `gsi1pk` / `gsi2pk`
//   costs the same units again under that index's partition key (doubled in a transaction too: an upper
//   bound).
// - a virtual time the test sets around each operation (`at`), so a test can replay 2,000 operations per
//   second on a laptop that performs far fewer: time compression.
// Conditional failures, conflicts and errors are not recorded (the operation's successful attempt is); the
// transactions refused for a conflict on a shared item are counted (`conflicts`).
import { AsyncLocalStorage } from 'node:async_hooks';
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { rawClient, tableName } from '../../shared/store/client';

type Av = AttributeValue;
type Item = Record<string, Av>;

/** One item write (or the GSI write it causes). */
export interface WriteRecord {
  /** Virtual seconds. */
  t: number;
  /** The table's partition key, or `<index>:<index partition key>` for a GSI write. */
  pk: string;
  sk: string;
  /** null until settled (an Update's size is read back). */
  units: number | null;
  doubled: boolean;
  kind: 'Put' | 'Update' | 'Delete';
  index?: string;
}

const MIDDLEWARE = 'writeRateAccountant';
const GSIS = ['gsi1', 'gsi2'] as const;

/** DynamoDB's size of one attribute value. */
export function valueSize(v: Av): number {
  if (v.S !== undefined) return Buffer.byteLength(v.S, 'utf8');
  if (v.N !== undefined) {
    const digits = v.N.replace(/^-/, '').replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
    return Math.ceil(Math.max(1, digits.length) / 2) + 1;
  }
  if (v.B !== undefined) return v.B.length;
  if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
  if (v.SS !== undefined) return v.SS.reduce((n, s) => n + Buffer.byteLength(s, 'utf8'), 0);
  if (v.NS !== undefined) return v.NS.reduce((n, s) => n + valueSize({ N: s }), 0);
  if (v.BS !== undefined) return v.BS.reduce((n, b) => n + b.length, 0);
  if (v.L !== undefined) return 3 + v.L.reduce((n, e) => n + 1 + valueSize(e), 0);
  if (v.M !== undefined) return 3 + Object.entries(v.M).reduce((n, [k, e]) => n + 1 + Buffer.byteLength(k, 'utf8') + valueSize(e), 0);
  return 1;
}

/** DynamoDB's size of an item: its attributes' names and values. */
export function itemSize(item: Item): number {
  return Object.entries(item).reduce((n, [k, v]) => n + Buffer.byteLength(k, 'utf8') + valueSize(v), 0);
}

export const unitsOf = (size: number) => Math.max(1, Math.ceil(size / 1024));

const keyId = (pk: string, sk: string) => `${pk}\u0000${sk}`;

export interface Rate {
  key: string;
  /** The highest units of any window, per second (units / window seconds). */
  perSecond: number;
  /** The window it was seen in (its start, virtual seconds) and the writes in it. */
  windowStart: number;
  writes: number;
}

/** A transaction cancelled because another one held one of its items (the caller retries it). */
const isConflict = (err: unknown): boolean => {
  const e = err as { name?: string; CancellationReasons?: { Code?: string }[] };
  return e?.name === 'TransactionConflictException' || (e?.CancellationReasons ?? []).some((r) => r.Code === 'TransactionConflict');
};

export class WriteRateAccountant {
  readonly records: WriteRecord[] = [];
  /** Transactions refused for a conflict with a concurrent one on a shared item (retried by shared/store/ops.ts). */
  conflicts = 0;
  private readonly clock = new AsyncLocalStorage<number>();
  private client: DynamoDBClient | undefined;

  /** Runs `op` with its writes stamped at virtual time `t` (seconds). */
  at<T>(t: number, op: () => Promise<T>): Promise<T> {
    return this.clock.run(t, op);
  }

  /**
   * Starts recording the store's writes (the client of shared/store/client.ts). By default only the writes of
   * operations run inside `at`; with `everyWrite`, every write of the process, at virtual time 0 unless an
   * `at` stamps it (the bench's cost section counts a whole pipeline's writes this way).
   */
  attach(client: DynamoDBClient = rawClient(), options: { everyWrite?: boolean } = {}): this {
    this.client = client;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const t = this.clock.getStore() ?? (options.everyWrite ? 0 : undefined);
        let out: Awaited<ReturnType<typeof next>>;
        try {
          out = await next(args);
        } catch (err) {
          if (t !== undefined && isConflict(err)) this.conflicts++;
          throw err;
        }
        if (t !== undefined) this.record(t, context.commandName ?? '', args.input as Record<string, unknown>);
        return out;
      },
      // After serialization (the DocumentClient marshals just before it), before the retries: the input is
      // in AttributeValue form here, whichever client sent it, and a request counts once.
      { step: 'build', priority: 'high', name: MIDDLEWARE, override: true },
    );
    return this;
  }

  detach(): void {
    this.client?.middlewareStack.remove(MIDDLEWARE);
    this.client = undefined;
  }

  private record(t: number, command: string, input: Record<string, unknown>): void {
    const put = (item: Item, doubled: boolean) => this.write(t, 'Put', item, doubled, unitsOf(itemSize(item)));
    const keyed = (kind: 'Update' | 'Delete', key: Item, doubled: boolean) =>
      this.write(t, kind, key, doubled, kind === 'Delete' ? 1 : null);
    if (command === 'PutItemCommand') put(input.Item as Item, false);
    else if (command === 'UpdateItemCommand') keyed('Update', input.Key as Item, false);
    else if (command === 'DeleteItemCommand') keyed('Delete', input.Key as Item, false);
    else if (command === 'BatchWriteItemCommand') {
      for (const requests of Object.values(
        input.RequestItems as Record<string, { PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }[]>,
      )) {
        for (const r of requests) {
          if (r.PutRequest) put(r.PutRequest.Item, false);
          if (r.DeleteRequest) keyed('Delete', r.DeleteRequest.Key, false);
        }
      }
    } else if (command === 'TransactWriteItemsCommand') {
      for (const op of input.TransactItems as { Put?: { Item: Item }; Update?: { Key: Item }; Delete?: { Key: Item } }[]) {
        if (op.Put) put(op.Put.Item, true);
        if (op.Update) keyed('Update', op.Update.Key, true);
        if (op.Delete) keyed('Delete', op.Delete.Key, true);
      }
    }
  }

  private write(t: number, kind: WriteRecord['kind'], item: Item, doubled: boolean, units: number | null): void {
    const pk = String(item.pk?.S);
    const sk = String(item.sk?.S);
    this.records.push({ t, pk, sk, units, doubled, kind });
    if (kind === 'Put') this.gsiWrites(t, item, doubled, units as number);
  }

  private gsiWrites(t: number, item: Item, doubled: boolean, units: number): void {
    for (const index of GSIS) {
      const pk = item[`${index}pk`]?.S;
      if (pk !== undefined)
        this.records.push({ t, pk: `${index}:${pk}`, sk: String(item[`${index}sk`]?.S), units, doubled, kind: 'Put', index });
    }
  }

  /** Reads back every updated item once (unrecorded) and gives its Update records their units and GSI writes. */
  async settle(): Promise<void> {
    const pending = this.records.filter((r) => r.units === null && !r.index);
    const keys = [...new Map(pending.map((r) => [keyId(r.pk, r.sk), { pk: r.pk, sk: r.sk }])).values()];
    const found = new Map<string, Item>();
    // Imported here: the sizing functions above are unit-tested without DynamoDB Local (its guard).
    const { verificationClient } = await import('./dynamo-calls');
    for (let i = 0; i < keys.length; i += 100) {
      let batch: Record<string, unknown>[] = keys.slice(i, i + 100);
      while (batch.length > 0) {
        const out = await verificationClient().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: batch } } }));
        for (const item of out.Responses?.[tableName()] ?? []) found.set(keyId(String(item.pk), String(item.sk)), marshallPlain(item));
        batch = out.UnprocessedKeys?.[tableName()]?.Keys ?? [];
      }
    }
    for (const r of pending) {
      const item = found.get(keyId(r.pk, r.sk));
      r.units = item ? unitsOf(itemSize(item)) : 1;
      if (item) this.gsiWrites(r.t, item, r.doubled, r.units);
    }
  }

  /** Write units of one record. */
  static units(r: WriteRecord): number {
    if (r.units === null) throw new Error('write-rate: settle() first');
    return r.units * (r.doubled ? 2 : 1);
  }

  /**
   * The highest rate per key, over windows of `window` seconds from virtual time 0: per partition key (`by`
   * 'partition', GSI partitions under `<index>:`) or per item (`by` 'item', table items only).
   */
  rates(by: 'partition' | 'item', window: number): Rate[] {
    const sums = new Map<string, Map<number, { units: number; writes: number }>>();
    for (const r of this.records) {
      if (by === 'item' && r.index) continue;
      const key = by === 'item' ? `${r.pk} | ${r.sk}` : r.pk;
      const slot = Math.floor(r.t / window + 1e-9);
      const perKey = sums.get(key) ?? new Map();
      const cell = perKey.get(slot) ?? { units: 0, writes: 0 };
      cell.units += WriteRateAccountant.units(r);
      cell.writes++;
      perKey.set(slot, cell);
      sums.set(key, perKey);
    }
    return [...sums]
      .map(([key, slots]) => {
        const [slot, cell] = [...slots].reduce((a, b) => (b[1].units > a[1].units ? b : a));
        return { key, perSecond: cell.units / window, windowStart: slot * window, writes: cell.writes };
      })
      .sort((a, b) => b.perSecond - a.perSecond);
  }
}

/** A plain (DocumentClient) item back in AttributeValue form, for sizing. */
function marshallPlain(item: Record<string, unknown>): Item {
  const av = (v: unknown): Av => {
    if (typeof v === 'string') return { S: v };
    if (typeof v === 'number' || typeof v === 'bigint') return { N: String(v) };
    if (typeof v === 'boolean') return { BOOL: v };
    if (v === null || v === undefined) return { NULL: true };
    if (v instanceof Uint8Array) return { B: v };
    if (v instanceof Set) return { SS: [...v].map(String) };
    if (Array.isArray(v)) return { L: v.map(av) };
    return { M: Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, e]) => [k, av(e)])) };
  };
  return Object.fromEntries(Object.entries(item).map(([k, v]) => [k, av(v)]));
}
