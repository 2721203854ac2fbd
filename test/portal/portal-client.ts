import type { FastifyInstance, LightMyRequestResponse } from 'fastify';

/**
 * A browser-like client of the portal over `inject`: keeps the cookies the portal sets
 * (by name; Path=/portal is all the portal uses) and reads the CSRF token of the last page.
 */
export class PortalClient {
  readonly cookies = new Map<string, string>();
  lastCsrf = '';

  constructor(private readonly t: { app: FastifyInstance }, private readonly headers: Record<string, string> = {}) {}

  private keep(res: LightMyRequestResponse) {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      const gone = c.value === '' || c.maxAge === 0 || (c.expires && c.expires.getTime() < Date.now());
      if (gone) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    const m = /name="_csrf" value="([^"]+)"/.exec(res.body);
    if (m) this.lastCsrf = m[1]!;
    return res;
  }

  private cookieHeader() {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  async get(url: string) {
    return this.keep(await this.t.app.inject({ method: 'GET', url, headers: { ...this.headers, cookie: this.cookieHeader() } }));
  }

  /** A form POST; `_csrf` is the last page's token unless the form gives its own (or null: none). */
  async post(url: string, form: Record<string, string | string[]> = {}, csrf: string | null = this.lastCsrf) {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const one of Array.isArray(v) ? v : [v]) body.append(k, one);
    if (csrf !== null && !('_csrf' in form)) body.append('_csrf', csrf);
    return this.keep(await this.t.app.inject({
      method: 'POST', url, payload: body.toString(),
      headers: { ...this.headers, cookie: this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
    }));
  }

  /** Signs in with a key (the sign-in page first, for the CSRF cookie and token). */
  async signIn(key: string) {
    await this.get('/portal/sign-in');
    const res = await this.post('/portal/sign-in', { api_key: key });
    if (res.statusCode !== 303) throw new Error(`sign-in failed: ${res.statusCode} ${res.body}`);
    return res;
  }
}

/** The Set-Cookie header line of a cookie. */
export function setCookieLine(res: LightMyRequestResponse, name: string): string | undefined {
  const raw = res.headers['set-cookie'];
  const lines = Array.isArray(raw) ? raw : raw ? [raw] : [];
  return lines.find((l) => l.startsWith(`${name}=`));
}
