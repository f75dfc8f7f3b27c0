// e2e: `npm start`'s runtime over real HTTP, and the log line a request leaves: with the demo API key,
// the line carries the request id (the one answered in X-Request-Id), the demo account's id, the route,
// the status and a timestamp.
//
// The runtime is started in this process as test/e2e/local-runtime.test.ts starts it (startLocal), with
// the readable console format `npm start` turns on (useReadableLogs, as infra/local/start.ts main() does):
// the test reads the lines a developer reads, and parses their `key=value` pairs back into fields. The
// JSON form Lambda prints is the same log item (shared/log.ts) and is asserted in
// test/integration/logging.test.ts; reading the readable one here also proves it keeps every field.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LocalRuntime } from '../../infra/local/start';
import { startTestRuntime } from '../support/runtime';
import { setLogLevel, useReadableLogs } from '../../shared/log';

const dataDir = mkdtempSync(join(tmpdir(), 'refloop-e2e-log-'));
let runtime: LocalRuntime | undefined;
const written: string[] = [];

beforeAll(async () => {
  const capture = (chunk: unknown): boolean => {
    written.push(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));
    return true;
  };
  jest.spyOn(process.stdout, 'write').mockImplementation(capture as unknown as typeof process.stdout.write);
  jest.spyOn(process.stderr, 'write').mockImplementation(capture as unknown as typeof process.stderr.write);
  jest.spyOn(console, 'log').mockImplementation(() => undefined); // the start banner
  useReadableLogs();
  setLogLevel('INFO'); // npm start's default (Jest's global setup silences the logger)
  runtime = await startTestRuntime(dataDir, 'refloop-e2e-log', { buildDashboard: false });
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  useReadableLogs(false);
  setLogLevel('SILENT');
  jest.restoreAllMocks();
  rmSync(dataDir, { recursive: true, force: true });
});

interface ReadableLine {
  time: string;
  level: string;
  message: string;
  fields: Record<string, unknown>;
}

/** "2026-05-01 10:00:00.123 INFO  message  key=value key="quoted value" ..." back into its parts. */
function parseLine(line: string): ReadableLine | null {
  const m = /^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) (DEBUG|INFO |WARN |ERROR|CRITICAL)\s(.*?)(?: {2}(\w+=.*))?$/.exec(line);
  if (!m) return null;
  const fields: Record<string, unknown> = {};
  for (const [, key, raw] of (m[4] ?? '').matchAll(/(\w+)=("(?:[^"\\]|\\.)*"|\S+)/g)) {
    try {
      fields[key as string] = JSON.parse(raw as string);
    } catch {
      fields[key as string] = raw; // a bare string
    }
  }
  return { time: m[1] as string, level: (m[2] as string).trim(), message: (m[3] as string).trim(), fields };
}

const lines = () =>
  written
    .join('')
    .split('\n')
    .map(parseLine)
    .filter((l): l is ReadableLine => l !== null);

async function get(path: string): Promise<{ status: number; requestId: string }> {
  const res = await fetch(`${runtime?.url}${path}`, { headers: { authorization: `Bearer ${runtime?.demo.apiKey}` } });
  await res.text();
  return { status: res.status, requestId: res.headers.get('x-request-id') ?? '' };
}

describe('a request under npm start leaves a structured line', () => {
  it('a refused request (INFO, on by default): request id, demo account id, route, status, detail, timestamp', async () => {
    const { status, requestId } = await get('/v1/referrals/0123456789abcdef0123456789abcdef/');
    expect(status).toBe(404);
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    const line = lines().find((l) => l.message === 'request answered' && l.fields.request_id === requestId);
    expect(line).toEqual({
      time: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/),
      level: 'INFO',
      message: 'request answered',
      fields: expect.objectContaining({
        request_id: requestId,
        account_id: runtime?.demo.accountId,
        route: 'GET /v1/referrals/{id}/',
        status: 404,
        duration_ms: expect.any(Number),
        detail: 'Not found.',
      }),
    });
    // The local time is the time of the request (within the test's few seconds).
    expect(Math.abs(new Date((line as ReadableLine).time.replace(' ', 'T')).getTime() - Date.now())).toBeLessThan(60_000);
    // The gateway's own line for the same request (method, path, status, duration) names the same id.
    expect(
      lines().some(
        (l) => l.message.startsWith('GET /v1/referrals/0123456789abcdef0123456789abcdef/ 404 ') && l.fields.request_id === requestId,
      ),
    ).toBe(true);
  });

  it('the browser endpoints name the account of their publishable key too', async () => {
    const res = await fetch(`${runtime?.url}/js/v1/clicks/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${runtime?.demo.publishableKey}`, 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(400);
    const requestId = res.headers.get('x-request-id');
    const line = lines().find((l) => l.message === 'request answered' && l.fields.request_id === requestId);
    expect(line).toMatchObject({
      level: 'INFO',
      fields: { account_id: runtime?.demo.accountId, route: 'POST /js/v1/clicks/', status: 400 },
    });
  });

  it('a served request at LOG_LEVEL=DEBUG: the same line at DEBUG, with its account id', async () => {
    setLogLevel('DEBUG');
    try {
      const { status, requestId } = await get('/v1/campaigns/');
      expect(status).toBe(200);
      const line = lines().find((l) => l.message === 'request answered' && l.fields.request_id === requestId);
      expect(line).toMatchObject({
        level: 'DEBUG',
        fields: { request_id: requestId, account_id: runtime?.demo.accountId, route: 'GET /v1/campaigns/', status: 200 },
      });
    } finally {
      setLogLevel('INFO');
    }
  });
});
