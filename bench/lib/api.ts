import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Small HTTP helpers for preparing a benchmark through the API, as a client would. */

export interface Answer {
  status: number;
  text: string;
  json(): Record<string, unknown>;
}

export async function call(base: string, method: string, url: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  const res = await fetch(base + url, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return { status: res.status, json: () => JSON.parse(text) as Record<string, unknown>, text };
}

export async function expectStatus(p: Promise<Answer>, status: number, what: string): Promise<Record<string, unknown>> {
  const res = await p;
  if (res.status !== status) throw new Error(`${what}: expected ${status}, got ${res.status} ${res.text.slice(0, 500)}`);
  return res.json();
}

/** Signs up (the sign-up route, as a client would) and returns a root test key. */
export async function signup(base: string): Promise<string> {
  const body = JSON.stringify({ name: 'Bench Merchant SARL', billing_email: `bench-${randomUUID()}@example.com` });
  const res = await expectStatus(call(base, 'POST', '/v1/accounts', { 'content-type': 'application/json' }, body), 201, 'sign-up');
  return (res.api_key as { key: string }).key;
}

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The installed version of a dependency, for the report. */
export function packageVersion(name: string): string {
  try {
    const file = path.join(ROOT, 'node_modules', ...name.split('/'), 'package.json');
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}
