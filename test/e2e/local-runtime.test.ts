// e2e: `npm start`'s entry point over real HTTP: demo key, JSON 404, and data surviving a restart.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../infra/local/dynamodb';
import { startLocal, type LocalRuntime } from '../../infra/local/start';

const dataDir = mkdtempSync(join(tmpdir(), 'refloop-e2e-'));
let runtime: LocalRuntime | undefined;

async function start(): Promise<LocalRuntime> {
  runtime = await startLocal({ port: await freePort(), dynamodbPort: await freePort(), dataDir, tableName: 'refloop-e2e' });
  return runtime;
}

async function call(method: string, path: string, key: string | null, body?: unknown) {
  if (!runtime) throw new Error('runtime not started');
  const res = await fetch(runtime.url + path, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
}

afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('local runtime', () => {
  let demoKey: string;
  let campaignId: string;

  beforeAll(async () => {
    const { demo, demoCreated } = await start();
    expect(demoCreated).toBe(true);
    expect(demo.apiKey).toMatch(/^rfl_live_/);
    demoKey = demo.apiKey;
  }, 60_000);

  it('serves a list with the demo key', async () => {
    const res = await call('GET', '/v1/campaigns/', demoKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.body).toMatchObject({ count: 0, next: null, previous: null, results: [] });
  });

  it('answers an unknown path with a JSON 404', async () => {
    const res = await call('GET', '/v1/no-such-thing/', demoKey);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Not found.' });
  });

  it('keeps data and the demo key across a restart on the same data directory', async () => {
    const created = await call('POST', '/v1/campaigns/', demoKey, { name: 'x' });
    expect(created.status).toBe(201);
    campaignId = created.body.id;
    expect(typeof campaignId).toBe('string');

    await runtime?.stop();
    const { demo, demoCreated } = await start();
    expect(demoCreated).toBe(false);
    expect(demo.apiKey).toBe(demoKey);

    const got = await call('GET', `/v1/campaigns/${campaignId}/`, demo.apiKey);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: campaignId, name: 'x' });
  }, 60_000);

  it('builds pagination links to the local server', async () => {
    const key = runtime?.demo.apiKey ?? null;
    expect((await call('POST', '/v1/campaigns/', key, { name: 'y' })).status).toBe(201);
    const page = await call('GET', '/v1/campaigns/?page_size=1', key);
    expect(page.status).toBe(200);
    expect(page.body.count).toBe(2);
    const next = new URL(page.body.next);
    expect(next.origin).toBe(runtime?.url);
    expect(next.pathname).toBe('/v1/campaigns/');
  });
});
