// What the emulator CLIs (infra/paddle.ts, paddle-billing.ts, stripe.ts) share: one call to an emulator's
// /_emulator/ control endpoint, its JSON answer printed on stdout. Exit code 0, or 1 when the emulator is
// down, answers something that is not JSON, or refuses (its `error` printed on one stderr line).
export interface EmulatorCall {
  /** The CLI's name, the prefix of its error lines ("paddle", "stripe"). */
  cli: string;
  /** How the emulator is called in messages ("Paddle emulator"). */
  label: string;
  /** The emulator's base URL (no trailing slash). */
  base: string;
  /** The control path below /_emulator/. */
  path: string;
  /** A JSON body makes it a POST; none, a GET. */
  body?: Record<string, unknown>;
  timeoutMs: number;
  /** Appended to "not reachable": what to start. */
  hint: string;
}

export async function callEmulator(call: EmulatorCall): Promise<number> {
  let res: Response;
  try {
    res = await fetch(`${call.base}/_emulator/${call.path}`, {
      method: call.body ? 'POST' : 'GET',
      headers: call.body ? { 'content-type': 'application/json' } : {},
      body: call.body ? JSON.stringify(call.body) : undefined,
      signal: AbortSignal.timeout(call.timeoutMs),
    });
  } catch {
    process.stderr.write(`${call.label} not reachable at ${call.base}; ${call.hint}\n`);
    return 1;
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    process.stderr.write(`${call.cli}: ${call.base} answered HTTP ${res.status} with a body that is not JSON; is it the ${call.label}?\n`);
    return 1;
  }
  if (!res.ok) {
    const message = (body as { error?: unknown })?.error;
    process.stderr.write(`${call.cli}: ${typeof message === 'string' ? message : `HTTP ${res.status}`}\n`.replace(/\s*\n\s*(?=.)/g, ' '));
    return 1;
  }
  process.stdout.write(JSON.stringify(body) + '\n');
  return 0;
}
