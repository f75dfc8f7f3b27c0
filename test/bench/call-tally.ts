// BENCH_DYNAMODB_CALLS=<file>: a tally of every DynamoDB call the bench runtime makes, by operation and by the
// kinds of item it touches, written to <file> when the runtime stops (a diagnostic, not a measurement: the
// proxy adds a hop to every call). It is how docs/capacity.md "Where the calls go under the full load" was
// found. The runtime's processes (the gateway's and the workers') talk to a counting proxy
// (test/support/fault-proxy.ts with no fault) in front of the DynamoDB Local the harness starts itself.
//
// A kind is the entity of the partition key after the account (`A#<id>#REFERRAL` -> REFERRAL, `A#<id>` ->
// ACCOUNT, `APIKEY#...` -> APIKEY) and the sort key's first part, with ids as `id` (`evt_id` for a prefixed
// one): `GetItem:REFERRAL/id`.
// A transaction lists its actions' first letters and kinds, sorted (`TransactWriteItems:PEMAIL/EMAIL,PUNSUB/UNSUB`);
// a Query its index and key values with ids left out.
import { writeFileSync } from 'node:fs';
import type { DynamoLocal } from '../../infra/local/dynamodb';
import { startFaultProxy } from '../support/fault-proxy';

type Json = Record<string, unknown>;

const isId = (part: string) => /^[0-9a-f]{6,}$/.test(part);

function kindOf(key: unknown): string {
  const k = (key ?? {}) as Record<string, { S?: string }>;
  const parts = String(k.pk?.S ?? '').split('#');
  const entity = parts[0] === 'A' ? (parts[2] ?? 'ACCOUNT') : parts[0];
  const sk = String(k.sk?.S ?? '').split('#')[0] ?? '';
  // A time-ordered id (32 hex), or a prefixed one (`evt_<hex>`, `app_<hex>`, `sub_<provider id>`).
  const prefixed = /^([a-z]+_)[0-9A-Za-z]{8,}$/.exec(sk);
  return `${entity}/${/^[0-9a-f]{8}/.test(sk) ? 'id' : prefixed ? `${prefixed[1]}id` : sk}`;
}

/** The tally's key for one call. */
export function callKind(target: string, body: string): string {
  const op = target.split('.')[1] ?? target;
  let j: Json;
  try {
    j = JSON.parse(body) as Json;
  } catch {
    return op;
  }
  if (Array.isArray(j.TransactItems)) {
    const actions = (j.TransactItems as Record<string, Json>[]).map((t) => {
      const [action, spec] = Object.entries(t)[0] ?? ['?', {}];
      return action[0] + kindOf((spec as Json).Item ?? (spec as Json).Key);
    });
    return `${op}:${actions.sort().join(',')}`;
  }
  if (j.Key) return `${op}:${kindOf(j.Key)}`;
  if (j.Item) return `${op}:${kindOf(j.Item)}`;
  if (j.RequestItems) {
    const request = Object.values(j.RequestItems as Json)[0] as { Keys?: unknown[] } | undefined;
    return `${op}:${[...new Set((request?.Keys ?? []).map(kindOf))].sort().join(',')}`;
  }
  if (typeof j.KeyConditionExpression === 'string') {
    const values = Object.values((j.ExpressionAttributeValues ?? {}) as Record<string, { S?: string }>).map((v) =>
      String(v.S ?? '')
        .split('#')
        .filter((p) => !isId(p))
        .join('#'),
    );
    return `${op}:${j.IndexName ?? 'table'} ${values.join(' ')}`;
  }
  return op;
}

/** `dynamo` behind a counting proxy; stopping the result writes the tally to `file` and stops both. */
export async function tallyCalls(dynamo: DynamoLocal, file: string): Promise<DynamoLocal> {
  const tally = new Map<string, number>();
  const started = Date.now();
  const proxy = await startFaultProxy({
    target: dynamo.endpoint,
    eligible: ({ headers, body }) => {
      const kind = callKind(String(headers['x-amz-target'] ?? ''), body.toString('utf8'));
      tally.set(kind, (tally.get(kind) ?? 0) + 1);
      return false;
    },
  });
  return {
    endpoint: proxy.url,
    stop: async () => {
      const seconds = (Date.now() - started) / 1000;
      const rows = [...tally].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
      const byOperation = new Map<string, number>();
      for (const [kind, n] of rows) {
        const op = kind.split(':')[0] ?? kind;
        byOperation.set(op, (byOperation.get(op) ?? 0) + n);
      }
      writeFileSync(
        file,
        [
          `# DynamoDB calls of the bench runtime in ${seconds.toFixed(1)} s`,
          ...[...byOperation].sort((a, b) => b[1] - a[1]).map(([op, n]) => `${n}\t${op} (all)`),
          ...rows.map(([kind, n]) => `${n}\t${kind}`),
          '',
        ].join('\n'),
      );
      await proxy.stop();
      await dynamo.stop();
    },
  };
}
