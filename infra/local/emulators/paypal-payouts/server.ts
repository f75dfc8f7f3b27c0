// PayPal Payouts emulator for `npm start` and the tests: the calls Refloop makes, in PayPal's wire format,
// over the ledger (./ledger.ts):
//
//   POST /v1/oauth2/token                         HTTP Basic client_id:secret, grant_type=client_credentials
//   POST /v1/payments/payouts                     201 {batch_header{batch_status: PENDING}, links}; 400
//                                                 VALIDATION_ERROR (the whole request) or USER_BUSINESS_ERROR
//                                                 (a sender_batch_id seen before, with a link to the original)
//   GET  /v1/payments/payouts/{id}                ?page=&page_size= (<= 1000)&total_required=; links next/previous
//   GET  /v1/payments/payouts-item/{id}
//   POST /v1/payments/payouts-item/{id}/cancel    only from UNCLAIMED (else 400 ITEM_INCORRECT_STATUS)
//   GET  /v1/notifications/certs/{name}           the PEM certificate its webhooks are signed with
//   POST /v1/notifications/verify-webhook-signature
//
// Every /v1/payments call needs `Authorization: Bearer <token>` (else 401 invalid_token). Items settle after
// `settleAfterMs` (or when `settle()` is called), each to its receiver's outcome (./ledger.ts), and every
// change is a webhook signed as PayPal signs them (SHA256withRSA over `id|time|webhook_id|crc32(body)`, the
// paypal-* headers), POSTed to the configured URL one at a time in order. Faults for tests: `failNext`
// answers the next calls 429 or 5xx before doing anything; `failAfterCommit` records the next batch and
// then answers 500 INTERNAL_ERROR. A CLI moves states by hand through the /_emulator/ control endpoints.
import { createSign, generateKeyPairSync, type KeyObject, randomBytes, randomUUID, sign as rsaSign } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';
import { type ItemStatus, Ledger, PaypalError, type PaypalEvent } from './ledger';

export interface PaypalEmulatorOptions {
  /** Default 0 = a free port; listens on 127.0.0.1. */
  port?: number;
  /** Default random. */
  clientId?: string;
  clientSecret?: string;
  /** The webhook id PayPal gives the registered webhook (part of the signed string); default random. */
  webhookId?: string;
  /** Where signed webhooks are POSTed; null = built and recorded, not delivered. */
  webhookUrl?: string | null;
  /** Items settle this long after their batch is created; null = only when `settle()` is called. Default 300. */
  settleAfterMs?: number | null;
  tokenTtlSeconds?: number;
}

export interface DeliveredEvent {
  event: PaypalEvent;
  rawBody: string;
  headers: Record<string, string>;
  /** HTTP status from the target; null when not delivered. */
  status: number | null;
}

export interface PaypalEmulator {
  url: string;
  port: number;
  clientId: string;
  clientSecret: string;
  webhookId: string;
  /** Where its certificate is served (what paypal-cert-url names). */
  certUrl: string;
  certificatePem: string;
  ledger: Ledger;
  setWebhookUrl(url: string | null): void;
  /** Sets what one receiver's items settle to (instead of the address's prefix rule). */
  setOutcome(receiver: string, status: ItemStatus): void;
  /** Settles the PENDING items now (of one batch by its payout_batch_id, or all); resolves when delivered. */
  settle(payoutBatchId?: string): Promise<DeliveredEvent[]>;
  /** Moves an item by hand (a later REVERSED, REFUNDED, RETURNED...) and delivers its event. */
  setItemStatus(payoutItemId: string, status: ItemStatus): Promise<DeliveredEvent[]>;
  /** The next `count` API calls answer `status` without doing anything. */
  failNext(count: number, status: 429 | 500 | 503): void;
  /** The next `count` batch creations are recorded, then answered 500 INTERNAL_ERROR. */
  failAfterCommit(count: number): void;
  /** The items recorded under a sender_batch_id (across every batch PayPal created for it: one). */
  itemsOf(senderBatchId: string): number;
  /** How many items paid (SUCCESS) this receiver, across every batch. */
  paidCount(receiver: string): number;
  /** `POST /v1/oauth2/token` calls so far. */
  tokenCalls(): number;
  /** API calls by `METHOD /path` with ids as {id}. */
  callCounts(): Record<string, number>;
  /** The parsed JSON body of every `POST /v1/payments/payouts`. */
  batchRequests(): unknown[];
  events(): DeliveredEvent[];
  /** Signs a raw body as a delivery of this emulator would be: the paypal-* headers. */
  sign(rawBody: string, transmissionId?: string, transmissionTime?: string): Record<string, string>;
  stop(): Promise<void>;
}

// --- A self-signed X.509 certificate (DER by hand: Node makes keys, not certificates) ---

function der(tag: number, content: Buffer): Buffer {
  const n = content.length;
  const len = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]);
  return Buffer.concat([Buffer.from([tag]), len, content]);
}
const seq = (...parts: Buffer[]) => der(0x30, Buffer.concat(parts));
const SHA256_WITH_RSA = seq(Buffer.from('06092a864886f70d01010b', 'hex'), Buffer.from('0500', 'hex'));
const name = (cn: string) => seq(der(0x31, seq(Buffer.from('0603550403', 'hex'), der(0x0c, Buffer.from(cn, 'utf8')))));
const utcTime = (d: Date) => der(0x17, Buffer.from(`${d.toISOString().slice(2, 19).replace(/[-:T]/g, '')}Z`, 'ascii'));

/**
 * A DER INTEGER of eight random bytes that is positive and minimal: the first byte is 0x40 to 0x7f. Only
 * clearing the top bit left a first byte of 0x00 about once in 128, and a leading zero before a byte under
 * 0x80 is padding DER forbids: OpenSSL then refuses the whole certificate ("illegal padding"), so about one
 * emulator in 300 served a certificate no webhook check could read.
 */
export function certificateSerial(bytes: Buffer = randomBytes(8)): Buffer {
  const serial = Buffer.from(bytes);
  serial[0] = ((serial[0] as number) & 0x3f) | 0x40;
  return serial;
}

/** A v1 self-signed certificate for `publicKey`, valid from a day ago for ten years. */
export function selfSignedCertificate(privateKey: KeyObject, publicKey: KeyObject, cn: string, serialBytes?: Buffer): string {
  const now = Date.now();
  const serial = certificateSerial(serialBytes);
  const tbs = seq(
    der(0x02, serial),
    SHA256_WITH_RSA,
    name(cn),
    seq(utcTime(new Date(now - 86400_000)), utcTime(new Date(now + 10 * 365 * 86400_000))),
    name(cn),
    publicKey.export({ type: 'spki', format: 'der' }),
  );
  const signature = rsaSign('sha256', tbs, privateKey);
  const cert = seq(tbs, SHA256_WITH_RSA, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const b64 = cert.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN CERTIFICATE-----\n${b64.trimEnd()}\n-----END CERTIFICATE-----\n`;
}

// --- HTTP ---

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': typeof body === 'string' ? 'text/plain' : 'application/json',
    'Paypal-Debug-Id': randomBytes(7).toString('hex').slice(0, 13),
    ...headers,
  });
  res.end(text);
}

function basic(header: string | undefined): { user: string; password: string } | null {
  const m = /^Basic +(\S+)$/i.exec(header ?? '');
  if (!m) return null;
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

export async function startPaypalEmulator(options: PaypalEmulatorOptions = {}): Promise<PaypalEmulator> {
  const clientId = options.clientId ?? `A${randomBytes(20).toString('base64url')}`;
  const clientSecret = options.clientSecret ?? `E${randomBytes(20).toString('base64url')}`;
  const webhookId = options.webhookId ?? `WH${randomBytes(8).toString('hex').toUpperCase()}`;
  const settleAfterMs = options.settleAfterMs === undefined ? 300 : options.settleAfterMs;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const certificatePem = selfSignedCertificate(privateKey, publicKey, 'messageverificationcerts.emulator.local');
  const certName = `CERT-${randomBytes(12)
    .toString('hex')
    .replace(/(.{8})(.{8})(.{8})/, '$1-$2-$3')}`;

  let baseUrl = '';
  const ledger = new Ledger({ clientId, clientSecret, tokenTtlSeconds: options.tokenTtlSeconds, baseUrl: () => baseUrl });
  let webhookUrl = options.webhookUrl ?? null;
  const delivered: DeliveredEvent[] = [];
  const counts: Record<string, number> = {};
  const batchRequests: unknown[] = [];
  const faults: { status: 429 | 500 | 503 }[] = [];
  let afterCommit = 0;
  const timers = new Set<NodeJS.Timeout>();
  const inflight = new AbortController();
  let queue: Promise<unknown> = Promise.resolve();

  function signHeaders(
    rawBody: string,
    transmissionId: string = randomUUID(),
    transmissionTime = new Date().toISOString(),
  ): Record<string, string> {
    const message = `${transmissionId}|${transmissionTime}|${webhookId}|${crc32(Buffer.from(rawBody, 'utf8')) >>> 0}`;
    const sig = createSign('SHA256').update(message, 'utf8').sign(privateKey, 'base64');
    return {
      'paypal-transmission-id': transmissionId,
      'paypal-transmission-time': transmissionTime,
      'paypal-transmission-sig': sig,
      'paypal-cert-url': `${baseUrl}/v1/notifications/certs/${certName}`,
      'paypal-auth-algo': 'SHA256withRSA',
    };
  }

  /** Delivers events one at a time, in order (after any delivery already queued). */
  function deliver(events: PaypalEvent[]): Promise<DeliveredEvent[]> {
    const run = queue.then(async () => {
      const out: DeliveredEvent[] = [];
      for (const event of events) {
        const rawBody = JSON.stringify(event);
        const headers = signHeaders(rawBody);
        const record: DeliveredEvent = { event, rawBody, headers, status: null };
        delivered.push(record);
        out.push(record);
        if (!webhookUrl) continue;
        try {
          const res = await fetch(webhookUrl, {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', ...headers },
            body: rawBody,
            signal: AbortSignal.any([inflight.signal, AbortSignal.timeout(10_000)]),
          });
          record.status = res.status;
          await res.arrayBuffer();
        } catch {
          record.status = null;
        }
      }
      return out;
    });
    queue = run.catch(() => undefined);
    return run;
  }

  function scheduleSettle(payoutBatchId: string): void {
    if (settleAfterMs === null) return;
    const t = setTimeout(() => {
      timers.delete(t);
      void deliver(ledger.settle(payoutBatchId));
    }, settleAfterMs);
    t.unref();
    timers.add(t);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', baseUrl);
    const path = url.pathname.replace(/\/+$/, '');
    const method = req.method ?? 'GET';
    const raw = await readBody(req);
    const key = `${method} ${path.replace(/\/(?=[^/]*\d)[A-Za-z0-9_.-]{8,}(?=\/|$)/g, '/{id}')}`;
    counts[key] = (counts[key] ?? 0) + 1;

    if (path.startsWith('/_emulator/')) return control(method, path.slice('/_emulator/'.length), raw, res);

    if (method === 'GET' && path.startsWith('/v1/notifications/certs/')) {
      if (path.slice('/v1/notifications/certs/'.length) !== certName)
        return send(res, 404, new PaypalError(404, 'RESOURCE_NOT_FOUND', 'The specified resource does not exist.').body());
      return send(res, 200, certificatePem, { 'Content-Type': 'application/x-pem-file' });
    }

    const fault = faults.shift();
    if (fault) {
      if (fault.status === 429)
        return send(res, 429, new PaypalError(429, 'RATE_LIMIT_REACHED', 'Too many requests. Blocked due to rate limiting.').body(), {
          'Retry-After': '1',
        });
      return send(res, fault.status, new PaypalError(fault.status, 'INTERNAL_ERROR', 'An internal service error has occurred.').body());
    }

    if (method === 'POST' && path === '/v1/oauth2/token') {
      const creds = basic(req.headers.authorization);
      try {
        const grant = new URLSearchParams(raw).get('grant_type');
        return send(res, 200, ledger.issueToken(creds?.user ?? null, creds?.password ?? null, grant));
      } catch (err) {
        const e = err as PaypalError;
        return send(res, e.status, { error: e.errorName, error_description: e.message });
      }
    }

    const bearer = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? null;
    if (path.startsWith('/v1/payments/') || path === '/v1/notifications/verify-webhook-signature') {
      if (!ledger.tokenValid(bearer))
        return send(res, 401, { error: 'invalid_token', error_description: 'Token signature verification failed' });
    }

    let body: unknown = null;
    if (method === 'POST' && raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        return send(res, 400, new PaypalError(400, 'MALFORMED_REQUEST', 'Incoming JSON request does not match the schema').body());
      }
    }

    if (method === 'POST' && path === '/v1/payments/payouts') {
      batchRequests.push(body);
      const batch = ledger.createBatch(body);
      scheduleSettle(batch.payout_batch_id);
      if (afterCommit > 0) {
        afterCommit--;
        return send(res, 500, new PaypalError(500, 'INTERNAL_ERROR', 'An internal service error has occurred.').body());
      }
      return send(res, 201, {
        batch_header: {
          payout_batch_id: batch.payout_batch_id,
          batch_status: batch.batch_status,
          time_created: batch.time_created,
          sender_batch_header: batch.sender_batch_header,
        },
        links: [
          { href: `${baseUrl}/v1/payments/payouts/${batch.payout_batch_id}`, rel: 'self', method: 'GET', encType: 'application/json' },
        ],
      });
    }

    let m = /^\/v1\/payments\/payouts\/([^/]+)$/.exec(path);
    if (method === 'GET' && m) {
      const batch = ledger.batches.get(decodeURIComponent(m[1] as string));
      if (!batch) return send(res, 404, new PaypalError(404, 'INVALID_RESOURCE_ID', 'Requested resource ID was not found.').body());
      const page = Number(url.searchParams.get('page') ?? '1');
      const pageSize = Number(url.searchParams.get('page_size') ?? '1000');
      if (!Number.isInteger(page) || page < 1 || !Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000)
        return send(
          res,
          400,
          new PaypalError(400, 'VALIDATION_ERROR', 'Invalid request - see details', [
            { field: 'page_size', location: 'query', issue: 'page and page_size must be positive; page_size at most 1000' },
          ]).body(),
        );
      const totalPages = Math.max(1, Math.ceil(batch.items.length / pageSize));
      const self = `${baseUrl}/v1/payments/payouts/${batch.payout_batch_id}`;
      const links = [{ href: `${self}?page=${page}&page_size=${pageSize}`, rel: 'self', method: 'GET' }];
      if (page < totalPages) links.push({ href: `${self}?page=${page + 1}&page_size=${pageSize}`, rel: 'next', method: 'GET' });
      if (page > 1) links.push({ href: `${self}?page=${page - 1}&page_size=${pageSize}`, rel: 'previous', method: 'GET' });
      return send(res, 200, {
        ...(url.searchParams.get('total_required') === 'true' ? { total_items: batch.items.length, total_pages: totalPages } : {}),
        batch_header: ledger.batchHeader(batch),
        items: batch.items.slice((page - 1) * pageSize, page * pageSize).map((i) => ledger.itemView(i, false)),
        links,
      });
    }

    m = /^\/v1\/payments\/payouts-item\/([^/]+)(\/cancel)?$/.exec(path);
    if (m && (method === 'GET' ? !m[2] : method === 'POST' && !!m[2])) {
      const itemId = decodeURIComponent(m[1] as string);
      try {
        if (method === 'GET') {
          const item = ledger.items.get(itemId);
          if (!item) throw new PaypalError(404, 'INVALID_RESOURCE_ID', 'Requested resource ID was not found.');
          return send(res, 200, ledger.itemView(item, true));
        }
        const { item, events } = ledger.cancel(itemId);
        void deliver(events);
        return send(res, 200, ledger.itemView(item, true));
      } catch (err) {
        const e = err as PaypalError;
        return send(res, e.status, e.body());
      }
    }

    if (method === 'POST' && path === '/v1/notifications/verify-webhook-signature') {
      const b = (body ?? {}) as Record<string, unknown>;
      const expected = signHeaders(JSON.stringify(b.webhook_event), String(b.transmission_id), String(b.transmission_time));
      const ok =
        b.webhook_id === webhookId && b.auth_algo === 'SHA256withRSA' && expected['paypal-transmission-sig'] === b.transmission_sig;
      return send(res, 200, { verification_status: ok ? 'SUCCESS' : 'FAILURE' });
    }

    return send(res, 404, new PaypalError(404, 'RESOURCE_NOT_FOUND', 'The specified resource does not exist.').body());
  }

  const STATUSES: readonly ItemStatus[] = [
    'PENDING',
    'SUCCESS',
    'FAILED',
    'UNCLAIMED',
    'RETURNED',
    'ONHOLD',
    'BLOCKED',
    'REFUNDED',
    'REVERSED',
  ];
  const summary = (events: DeliveredEvent[]) =>
    events.map((d) => ({ event_id: d.event.id, event_type: d.event.event_type, status: d.status }));

  /**
   * Control endpoints for a CLI (no token): `GET batches` (each batch with its items' receivers and statuses),
   * `POST settle` `{payout_batch_id?}`, `POST item-status` `{payout_item_id, status}` (a later REVERSED,
   * REFUNDED, RETURNED...), `POST outcome` `{receiver, status}`. Each POST answers the webhooks it sent.
   */
  async function control(method: string, action: string, raw: string, res: ServerResponse): Promise<void> {
    if (method === 'GET' && action === 'batches')
      return send(res, 200, {
        batches: [...ledger.batches.values()].map((b) => ({
          payout_batch_id: b.payout_batch_id,
          sender_batch_id: b.sender_batch_header.sender_batch_id ?? null,
          batch_status: b.batch_status,
          items: b.items.map((i) => ({
            payout_item_id: i.payout_item_id,
            sender_item_id: i.payout_item.sender_item_id ?? null,
            receiver: i.payout_item.receiver,
            amount: i.payout_item.amount,
            transaction_status: i.transaction_status,
          })),
        })),
      });
    if (method !== 'POST') return send(res, 404, { error: `unknown control endpoint ${method} /_emulator/${action}` });
    let p: Record<string, unknown>;
    try {
      p = raw === '' ? {} : (JSON.parse(raw) as Record<string, unknown>);
    } catch {
      return send(res, 400, { error: 'body must be JSON' });
    }
    const status = () => {
      const v = String(p.status ?? '').toUpperCase() as ItemStatus;
      if (!STATUSES.includes(v)) throw new PaypalError(400, 'VALIDATION_ERROR', `status must be one of ${STATUSES.join(', ')}`);
      return v;
    };
    const str = (key: string) => {
      const v = p[key];
      if (typeof v !== 'string' || v === '') throw new PaypalError(400, 'VALIDATION_ERROR', `${key} is required`);
      return v;
    };
    if (action === 'settle')
      return send(res, 200, {
        delivered: summary(await deliver(ledger.settle(typeof p.payout_batch_id === 'string' ? p.payout_batch_id : undefined))),
      });
    if (action === 'item-status')
      return send(res, 200, { delivered: summary(await deliver(ledger.setStatus(str('payout_item_id'), status()))) });
    if (action === 'outcome') {
      ledger.outcomes.set(str('receiver').toLowerCase(), status());
      return send(res, 200, { receiver: str('receiver').toLowerCase(), status: status() });
    }
    return send(res, 404, { error: `unknown control endpoint ${method} /_emulator/${action}` });
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (err instanceof PaypalError) return send(res, err.status, err.body());
      send(res, 500, new PaypalError(500, 'INTERNAL_ERROR', 'An internal service error has occurred.').body());
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;

  return {
    url: baseUrl,
    port,
    clientId,
    clientSecret,
    webhookId,
    certUrl: `${baseUrl}/v1/notifications/certs/${certName}`,
    certificatePem,
    ledger,
    setWebhookUrl: (u) => {
      webhookUrl = u;
    },
    setOutcome: (receiver, status) => {
      ledger.outcomes.set(receiver.toLowerCase(), status);
    },
    settle: (payoutBatchId) => deliver(ledger.settle(payoutBatchId)),
    setItemStatus: (payoutItemId, status) => deliver(ledger.setStatus(payoutItemId, status)),
    failNext: (count, status) => {
      for (let i = 0; i < count; i++) faults.push({ status });
    },
    failAfterCommit: (count) => {
      afterCommit += count;
    },
    itemsOf: (senderBatchId) => {
      const id = ledger.bySenderBatchId.get(senderBatchId);
      return id ? (ledger.batches.get(id)?.items.length ?? 0) : 0;
    },
    paidCount: (receiver) =>
      [...ledger.items.values()].filter(
        (i) => i.payout_item.receiver.toLowerCase() === receiver.toLowerCase() && i.transaction_status === 'SUCCESS',
      ).length,
    tokenCalls: () => ledger.tokenCalls,
    callCounts: () => ({ ...counts }),
    batchRequests: () => [...batchRequests],
    events: () => [...delivered],
    sign: (rawBody, transmissionId, transmissionTime) => signHeaders(rawBody, transmissionId, transmissionTime),
    stop: async () => {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      inflight.abort();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
