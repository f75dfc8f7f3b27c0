// A fault-injecting HTTP proxy for tests: sits between a client (the AWS SDK, fetch) and a local
// dependency (DynamoDB Local, the local SQS, the Paddle emulator) and, for a chosen share of the calls,
// drops, delays or fails them. Plain node:http: method, path, headers and body are forwarded as
// received (the Host header too: neither DynamoDB Local nor local-aws-sqs checks signatures).
//
// Fault modes:
// - 'drop': the client's socket is destroyed before anything is forwarded (nothing happened upstream);
// - 'delay': 100-500 ms pause, then forwarded normally;
// - 'error': answered by the proxy with the dependency's own 5xx (nothing happened upstream);
// - 'drop-response': forwarded, the upstream answer is read in full and thrown away, then the client's
//   socket is destroyed. The write happened; the client believes it failed. This is the case that
//   tests idempotency of retries ("no duplicate", "no partial write").
//
// Listens on 127.0.0.1 so the app's clients treat the endpoint as local (dummy credentials).
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';

export type FaultMode = 'drop' | 'delay' | 'error' | 'drop-response';
export type FaultFlavour = 'dynamodb' | 'sqs' | 'paddle';

export type Eligible = (req: { method: string; path: string; headers: IncomingHttpHeaders; body: Buffer }) => boolean;

export interface FaultProxyOptions {
  /** `http://127.0.0.1:<port>` of the real dependency. */
  target: string;
  /** Share of requests (0..1) that get a fault; default 0. */
  faultRate?: number;
  /**
   * Which error 'error' answers with; default 'auto': DynamoDB's for a `DynamoDB_...` X-Amz-Target,
   * SQS's for an `AmazonSQS....` one, Paddle's (an HTML 503) for anything else.
   */
  flavour?: FaultFlavour | 'auto';
  /** The modes a faulted request picks from, uniformly; default all four. */
  modes?: FaultMode[];
  /** Seed of the PRNG that picks faulted requests and modes; default random. */
  seed?: number;
  /** Only requests this returns true for are eligible for a fault (e.g. by X-Amz-Target); default all. */
  eligible?: Eligible;
}

export interface FaultStats {
  /** Requests received. */
  total: number;
  /** Requests sent upstream (including delayed and drop-response ones). */
  forwarded: number;
  /** Dropped before forwarding. */
  dropped: number;
  delayed: number;
  /** Answered with an injected 5xx. */
  errored: number;
  /** Forwarded, then the answer dropped. */
  responseDropped: number;
  /** Upstream calls that failed on their own (the client's socket is destroyed then). */
  upstreamFailed: number;
}

export interface FaultProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  setFaultRate(rate: number): void;
  setModes(modes: FaultMode[]): void;
  /** Which requests may get a fault from now on; undefined = all. */
  setEligible(eligible: Eligible | undefined): void;
  stats(): FaultStats;
  /** Counts of faults by `X-Amz-Target` operation (or `METHOD path` for others). */
  faultsByOperation(): Record<string, number>;
  resetStats(): void;
  stop(): Promise<void>;
}

const ALL_MODES: FaultMode[] = ['drop', 'delay', 'error', 'drop-response'];

/** mulberry32: a small, fast, seedable PRNG (uniform in [0, 1)). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function injectedError(flavour: FaultFlavour): { status: number; headers: Record<string, string>; body: string } {
  switch (flavour) {
    case 'dynamodb':
      return {
        status: 500,
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': 'injected' },
        body: JSON.stringify({ __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'injected' }),
      };
    case 'sqs':
      return {
        status: 500,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amzn-query-error': 'InternalError;Receiver',
          'x-amzn-requestid': 'injected',
        },
        body: JSON.stringify({ __type: 'InternalError', message: 'injected' }),
      };
    case 'paddle':
      return {
        status: 503,
        headers: { 'content-type': 'text/html' },
        body: '<html><body>503 Service Unavailable (injected)</body></html>',
      };
  }
}

function operationOf(req: IncomingMessage): string {
  const target = req.headers['x-amz-target'];
  if (typeof target === 'string') return target.split('.').pop() ?? target;
  return `${req.method ?? 'GET'} ${(req.url ?? '/').split('?')[0]}`;
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  const flavourOf = (req: IncomingMessage): FaultFlavour => {
    if (options.flavour && options.flavour !== 'auto') return options.flavour;
    const target = String(req.headers['x-amz-target'] ?? '');
    if (target.startsWith('DynamoDB_')) return 'dynamodb';
    if (target.startsWith('AmazonSQS.')) return 'sqs';
    return 'paddle';
  };
  let faultRate = options.faultRate ?? 0;
  let modes = [...(options.modes ?? ALL_MODES)];
  let eligibleFn = options.eligible;
  const random = seededRandom(options.seed ?? Math.floor(Math.random() * 2 ** 32));
  const upstream = new Agent({ keepAlive: true, maxSockets: 64 });
  const empty = (): FaultStats => ({ total: 0, forwarded: 0, dropped: 0, delayed: 0, errored: 0, responseDropped: 0, upstreamFailed: 0 });
  let stats = empty();
  let byOperation: Record<string, number> = {};
  const pending = new Set<NodeJS.Timeout>();
  let stopping = false;

  const readBody = (req: IncomingMessage) =>
    new Promise<Buffer>((ok, fail) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => ok(Buffer.concat(chunks)));
      req.on('error', fail);
    });

  const sleep = (ms: number) =>
    new Promise<void>((ok) => {
      const timer = setTimeout(() => {
        pending.delete(timer);
        ok();
      }, ms);
      pending.add(timer);
    });

  /** Forwards the request; resolves with the full upstream answer. */
  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((ok, fail) => {
      stats.forwarded++;
      const headers = { ...req.headers };
      // Hop-by-hop headers are the proxy's own business.
      delete headers.connection;
      delete headers['keep-alive'];
      delete headers['transfer-encoding'];
      headers['content-length'] = String(body.length);
      const out = request(
        {
          protocol: target.protocol,
          hostname: target.hostname,
          port: target.port,
          method: req.method,
          path: req.url,
          headers,
          agent: upstream,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => ok({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', fail);
        },
      );
      out.on('error', fail);
      out.end(body);
    });

  const reply = (res: ServerResponse, status: number, headers: IncomingHttpHeaders, body: Buffer) => {
    const clean: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(headers)) {
      if (value === undefined || ['connection', 'keep-alive', 'transfer-encoding', 'content-length'].includes(name)) continue;
      clean[name] = value;
    }
    clean['content-length'] = String(body.length);
    res.writeHead(status, clean);
    res.end(body);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    stats.total++;
    const eligible = eligibleFn?.({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body }) ?? true;
    const mode: FaultMode | null =
      eligible && !stopping && modes.length > 0 && random() < faultRate ? (modes[Math.floor(random() * modes.length)] as FaultMode) : null;
    if (mode) {
      const op = operationOf(req);
      byOperation[`${mode} ${op}`] = (byOperation[`${mode} ${op}`] ?? 0) + 1;
    }
    if (mode === 'drop') {
      stats.dropped++;
      req.socket.destroy();
      return;
    }
    if (mode === 'error') {
      stats.errored++;
      const e = injectedError(flavourOf(req));
      reply(res, e.status, e.headers, Buffer.from(e.body, 'utf8'));
      return;
    }
    if (mode === 'delay') {
      stats.delayed++;
      await sleep(100 + Math.floor(random() * 400));
    }
    let answer: { status: number; headers: IncomingHttpHeaders; body: Buffer };
    try {
      answer = await forward(req, body);
    } catch {
      stats.upstreamFailed++;
      req.socket.destroy();
      return;
    }
    if (mode === 'drop-response') {
      stats.responseDropped++;
      req.socket.destroy();
      return;
    }
    if (!res.destroyed) reply(res, answer.status, answer.headers, answer.body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  // Clients hold keep-alive sockets; they must not keep a test process alive.
  server.unref();
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', fail);
      ok();
    });
  });
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('fault proxy: no listening address');

  let stopped: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${address.port}`,
    setFaultRate: (rate) => {
      if (!(rate >= 0 && rate <= 1)) throw new Error(`fault rate must be within 0..1, got ${rate}`);
      faultRate = rate;
    },
    setModes: (next) => {
      modes = [...next];
    },
    setEligible: (next) => {
      eligibleFn = next;
    },
    stats: () => ({ ...stats }),
    faultsByOperation: () => ({ ...byOperation }),
    resetStats: () => {
      stats = empty();
      byOperation = {};
    },
    stop: () => {
      stopped ??= new Promise<void>((ok) => {
        stopping = true;
        for (const timer of pending) clearTimeout(timer);
        pending.clear();
        server.close(() => ok());
        server.closeAllConnections();
        upstream.destroy();
      });
      return stopped;
    },
  };
}
