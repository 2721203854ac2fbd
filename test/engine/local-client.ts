import { spawn, type ChildProcess } from 'node:child_process';

/**
 * What the local-host tests share: a JSON client for a host reached over real HTTP, and a
 * child process (`npm run local`, the executable) started on a free port and stopped with
 * SIGTERM.
 */
export interface JsonResponse {
  status: number;
  body: any;
  headers: Headers;
}

export function jsonClient(baseUrl: string) {
  const call = async (method: string, path: string, key?: string, body?: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> => {
    const res = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(body !== undefined && !Buffer.isBuffer(body) ? { 'content-type': 'application/json' } : {}), ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
      ...(body !== undefined ? { body: Buffer.isBuffer(body) ? new Uint8Array(body) : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch { /* not JSON: keep the text */ }
    return { status: res.status, body: parsed, headers: res.headers };
  };
  return {
    get: (path: string, key?: string) => call('GET', path, key),
    post: (path: string, body: unknown, key?: string, headers?: Record<string, string>) => call('POST', path, key, body, headers),
    /** A fresh account: its id and first (root, test) key. */
    async signup(name = 'Tienda Local SL'): Promise<{ accountId: string; key: string }> {
      const res = await call('POST', '/v1/accounts', undefined, { name, billing_email: `local-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com` });
      if (res.status !== 201) throw new Error(`sign-up: ${res.status} ${JSON.stringify(res.body)}`);
      return { accountId: res.body.account.id, key: res.body.api_key.key };
    },
  };
}

/** A VERI*FACTU location (sandbox stub unless the request says otherwise). */
export const verifactuLocation = (taxId = 'B12345674', over: Record<string, unknown> = {}) => ({
  name: 'Madrid', country: 'ES', tax_id: taxId,
  country_config: { system: 'verifactu', legal_name: 'Tienda Local SL', software_nif: 'B12345674', ...over },
});

export const cafeSale = (locationId: string, over: Record<string, unknown> = {}) => ({
  location_id: locationId, timestamp: new Date().toISOString(), currency: 'EUR', payment_method: 'card',
  items: [{ description: 'Café', quantity: 1, unit_price: 200, tax_rate: 10 }], pretax_amount: 200, tax_amount: 20, total_amount: 220,
  ...over,
});

/** Polls `check` until it returns a value (not undefined) or `ms` pass. */
export async function eventually<T>(check: () => Promise<T | undefined>, ms = 10_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface Child {
  child: ChildProcess;
  url: string;
  output: () => string;
  /** SIGTERM; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Starts a host process and waits for its "local host listening at <url>" line. A fresh data
 * directory's initdb takes a few seconds on an idle machine, far more on a loaded CI box:
 * the generous default wait only matters when something is wrong.
 */
export async function startChild(command: string, args: string[], env: NodeJS.ProcessEnv, opts: { cwd?: string; timeoutMs?: number } = {}): Promise<Child> {
  const child = spawn(command, args, { env, cwd: opts.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listen line within ${opts.timeoutMs ?? 90_000} ms:\n${out}`)), opts.timeoutMs ?? 90_000);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = /local host listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before listening:\n${out}`));
    });
  });
  return {
    child, url, output: () => out,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The environment a test host gets: nothing of the test runner's store settings. */
export function localEnv(dataDir: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', ...extra };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'MASTER_KEY', 'WORKERS_IN_PROCESS']) if (!(name in extra)) delete env[name];
  return env;
}
