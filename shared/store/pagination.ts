// Cursor pagination over one Query. A cursor is opaque to clients: base64url JSON holding the
// direction, the sort-key value to continue from, and a digest of the account and filters it was
// issued for, so it only works with the query that produced it.
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { ValidationError } from '../domain/errors';
import { db, tableName } from './client';
import { GSI1, GSI2 } from './table';

interface Cursor {
  /** 'n': items older than `k` (next page); 'p': items newer than `k` (previous page). */
  d: 'n' | 'p';
  k: string;
  /** Inclusive bound (a previous link from an empty page must include its own key). */
  i?: 1;
  s: string;
}

export interface PageRequest {
  pageSize: number;
  cursor?: string | undefined;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
  previousCursor: string | null;
}

export interface PageQuery {
  index?: typeof GSI1 | typeof GSI2;
  partitionValue: string;
  /** Binds the cursor to this query: the account id and the filter values. */
  scope: string;
  /**
   * A FilterExpression for a filter the partition does not key on (e.g. a member's rewards in one status).
   * The page is then filled by up to FILTERED_READS Queries; a page may hold fewer items than asked,
   * with a next link, when matches are sparse. Lists keep their exact `count` from counters.
   */
  filter?: { expression: string; names: Record<string, string>; values: Record<string, unknown> };
}

const FILTERED_READS = 5;

const invalidCursor = () => ValidationError.field('cursor', 'Invalid cursor.');

function scopeDigest(scope: string): string {
  return createHash('sha256').update(scope).digest('base64url').slice(0, 12);
}

function encode(cursor: Cursor): string {
  return Buffer.from(JSON.stringify(cursor), 'utf8').toString('base64url');
}

function decode(raw: string, scope: string): Cursor {
  if (raw.length > 600 || !/^[A-Za-z0-9_-]+$/.test(raw)) throw invalidCursor();
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor();
  }
  const c = value as Partial<Cursor>;
  if (
    typeof c !== 'object' ||
    c === null ||
    (c.d !== 'n' && c.d !== 'p') ||
    typeof c.k !== 'string' ||
    c.k.length === 0 ||
    c.k.length > 300 ||
    c.s !== scopeDigest(scope)
  ) {
    throw invalidCursor();
  }
  return { d: c.d, k: c.k, s: c.s, ...(c.i === 1 ? { i: 1 as const } : {}) };
}

/**
 * One page of a partition, newest first (descending sort key). Reads page_size + 1 items to know
 * whether another page exists, so a page costs exactly one Query whatever the partition's size.
 */
export async function queryPage<T extends Record<string, unknown>>(q: PageQuery, page: PageRequest): Promise<Page<T>> {
  const pkName = q.index === GSI1 ? 'gsi1pk' : q.index === GSI2 ? 'gsi2pk' : 'pk';
  const skName = q.index === GSI1 ? 'gsi1sk' : q.index === GSI2 ? 'gsi2sk' : 'sk';
  const cursor = page.cursor ? decode(page.cursor, q.scope) : undefined;
  const backwards = cursor?.d === 'p';

  const input: QueryCommandInput = {
    TableName: tableName(),
    IndexName: q.index,
    KeyConditionExpression: '#pk = :pk',
    ExpressionAttributeNames: { '#pk': pkName },
    ExpressionAttributeValues: { ':pk': q.partitionValue },
    ScanIndexForward: backwards,
    Limit: page.pageSize + 1,
    // Base-table pages are strongly consistent (read-your-writes); GSIs cannot be.
    ...(q.index ? {} : { ConsistentRead: true }),
  };
  if (cursor) {
    const op = cursor.d === 'n' ? '<' : cursor.i ? '>=' : '>';
    input.KeyConditionExpression += ` AND #sk ${op} :sk`;
    input.ExpressionAttributeNames!['#sk'] = skName;
    input.ExpressionAttributeValues![':sk'] = cursor.k;
  }

  let Items: Record<string, unknown>[] = [];
  let evaluatedTo: string | undefined;
  if (!q.filter) {
    const out = await db().send(new QueryCommand(input));
    Items = out.Items ?? [];
    // Stopped short by DynamoDB's 1 MB per Query (large items, e.g. batches of thousands of payouts): the
    // next page continues from where it stopped.
    if (out.LastEvaluatedKey && Items.length <= page.pageSize) evaluatedTo = String(out.LastEvaluatedKey[skName]);
  } else {
    input.FilterExpression = q.filter.expression;
    Object.assign(input.ExpressionAttributeNames!, q.filter.names);
    Object.assign(input.ExpressionAttributeValues!, q.filter.values);
    // The first read asks for a page (what a filter that matches everything needs); when matches are
    // sparse, each further read asks for four times more, up to 1,000 items.
    let limit = page.pageSize + 1;
    let startKey: Record<string, unknown> | undefined;
    for (let read = 0; read < FILTERED_READS && Items.length <= page.pageSize; read++, limit = Math.min(1_000, limit * 4)) {
      const out = await db().send(new QueryCommand({ ...input, Limit: limit, ...(startKey ? { ExclusiveStartKey: startKey } : {}) }));
      Items.push(...(out.Items ?? []));
      startKey = out.LastEvaluatedKey;
      if (!startKey) break;
    }
    // Stopped with matches left unread: the next page continues from where the reads stopped.
    if (startKey && Items.length <= page.pageSize) evaluatedTo = String(startKey[skName]);
  }
  const more = Items.length > page.pageSize || evaluatedTo !== undefined;
  const taken = Items.slice(0, page.pageSize);
  const items = (backwards ? taken.reverse() : taken) as T[];
  const s = scopeDigest(q.scope);
  const first = items[0]?.[skName];
  const last = !backwards && evaluatedTo !== undefined && Items.length <= page.pageSize ? evaluatedTo : items[items.length - 1]?.[skName];

  const hasNewer = backwards ? more : cursor !== undefined;
  const hasOlder = backwards ? true : more;
  let previousCursor: string | null = null;
  let nextCursor: string | null = null;
  if (hasNewer) {
    previousCursor = typeof first === 'string' ? encode({ d: 'p', k: first, s }) : cursor ? encode({ d: 'p', k: cursor.k, i: 1, s }) : null;
  }
  if (hasOlder && typeof last === 'string') nextCursor = encode({ d: 'n', k: last, s });
  return { items, nextCursor, previousCursor };
}

/** The answer for a filter on a missing parent (unknown member or campaign): nothing, count 0. */
export function emptyPage() {
  return { items: [], nextCursor: null, previousCursor: null, count: 0 };
}

/**
 * One page of a short list already in memory, newest first (a search's few matches), with the same
 * cursors as queryPage: `keyOf` gives each item's sort key, descending in `items`.
 */
export function arrayPage<T>(items: T[], keyOf: (item: T) => string, scope: string, page: PageRequest): Page<T> {
  const cursor = page.cursor ? decode(page.cursor, scope) : undefined;
  const s = scopeDigest(scope);
  let window: T[];
  let hasNewer: boolean;
  let hasOlder: boolean;
  if (!cursor) {
    window = items.slice(0, page.pageSize);
    hasNewer = false;
    hasOlder = items.length > page.pageSize;
  } else if (cursor.d === 'n') {
    const older = items.filter((i) => keyOf(i) < cursor.k);
    window = older.slice(0, page.pageSize);
    hasOlder = older.length > page.pageSize;
    hasNewer = older.length < items.length;
  } else {
    const newer = items.filter((i) => (cursor.i ? keyOf(i) >= cursor.k : keyOf(i) > cursor.k));
    window = newer.slice(Math.max(0, newer.length - page.pageSize));
    hasNewer = newer.length > page.pageSize;
    hasOlder = newer.length < items.length;
  }
  const first = window[0];
  const last = window[window.length - 1];
  return {
    items: window,
    previousCursor: hasNewer && first !== undefined ? encode({ d: 'p', k: keyOf(first), s }) : null,
    nextCursor: hasOlder && last !== undefined ? encode({ d: 'n', k: keyOf(last), s }) : null,
  };
}
