// The part of autocannon 9's programmatic API the bench uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Returns the request to send (mutated or new); a falsy value restarts the sequence. */
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | undefined;
    }

    interface Options {
      url: string;
      connections?: number;
      /** Requests per second from each connection (autocannon paces them); absent: as fast as answered. */
      connectionRate?: number;
      duration?: number;
      amount?: number;
      pipelining?: number;
      timeout?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string;
      requests?: Request[];
      excludeErrorStats?: boolean;
    }

    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      p50: number;
      p90: number;
      p97_5: number;
      p99: number;
      total?: number;
    }

    interface Result {
      duration: number;
      start: Date;
      finish: Date;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      '4xx': number;
      '5xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
    }

    /** Emits `response` (client, statusCode, resBytes, responseTime ms) for every response. */
    type Instance = EventEmitter;
  }

  function autocannon(options: autocannon.Options, callback: (err: Error | null, result: autocannon.Result) => void): autocannon.Instance;
  export = autocannon;
}
