/**
 * Country facts stay in their plug-in's folder (issue #12): shared code reads them through
 * the plug-in contract and the registry, never by name. This check lists the shared
 * files that name one anyway.
 *
 * Scanned: every `.ts` file under src/ outside src/countries/, test files excluded,
 * comments included (a comment that names a system goes stale when the system changes).
 * Searched for, all taken from the registry:
 * - each registered system's key (`es-verifactu`), as a whole word;
 * - each status a plug-in declares (`statuses.statuses`): as a whole word when it is an
 *   identifier (`pending_lroe`); when it is also an English word (`delivered`) only where
 *   it is quoted as code ('…', "…", `…`), as prose may use the word; a name that is also
 *   an outcome's kind in the plug-in contract (`rejected`) is shared vocabulary, not
 *   searched;
 * - the config and line fields the plug-ins own: `certificateFields`, `secretConfigFields`,
 *   `lineFields`, as whole words, except `certificate_id`, which is also the name of an
 *   uploaded certificate in the API (POST /v1/certificates).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SYSTEMS } from './registry.ts';
import type { AuthorityOutcome } from './types.ts';

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The outcome kinds of the plug-in contract: words shared code must be able to say. */
const OUTCOME_KINDS = ['accepted', 'rejected', 'retry_later', 'duplicate', 'sent'] as const satisfies readonly AuthorityOutcome['kind'][];

/** Names a shared file may still carry, and why. `*`: every name. None today: keep it that way. */
const ALLOWED: readonly { file: RegExp; names: readonly string[] | '*'; why: string }[] = [];

interface Needle {
  name: string;
  /** What it is and whose: `status of it-sdi`. */
  what: string;
  pattern: RegExp;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const asWord = (name: string) => new RegExp(`(?<![\\w-])${escape(name)}(?![\\w-])`);
const asCode = (name: string) => new RegExp(`(['"\`])${escape(name)}\\1`);

function needles(): Needle[] {
  const found = new Map<string, { kind: string; owners: string[]; pattern: RegExp }>();
  const add = (name: string, kind: string, owner: string, pattern: RegExp) => {
    const known = found.get(name);
    if (known) known.owners.push(owner);
    else found.set(name, { kind, owners: [owner], pattern });
  };
  for (const s of SYSTEMS) {
    add(s.key, 'system key', s.key, asWord(s.key));
    for (const { name } of s.statuses?.statuses ?? []) {
      if ((OUTCOME_KINDS as readonly string[]).includes(name)) continue;
      add(name, 'status', s.key, name.includes('_') ? asWord(name) : asCode(name));
    }
    for (const e of s.events ?? []) add(e, 'event', s.key, asWord(e));
    // A line surcharge owns two names: its rate and its amount field.
    const lineNames = (s.lineFields ?? []).flatMap((f) => (f.type === 'surcharge' ? [f.name, f.amount] : [f.name]));
    const fields = [...s.certificateFields, ...s.secretConfigFields, ...lineNames];
    for (const f of fields) if (f !== 'certificate_id') add(f, 'field', s.key, asWord(f));
  }
  return [...found].map(([name, n]) => ({ name, what: `${n.kind} of ${n.owners.join(', ')}`, pattern: n.pattern }));
}

function sharedFiles(dir = SRC): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    const rel = path.relative(SRC, full).split(path.sep).join('/');
    if (entry.isDirectory()) {
      if (rel !== 'countries') out.push(...sharedFiles(full));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
      out.push(rel);
    }
  }
  return out.sort();
}

const allowed = (file: string, name: string) =>
  ALLOWED.some((a) => a.file.test(file) && (a.names === '*' || a.names.includes(name)));

describe('shared code names no system, status or field of a plug-in', () => {
  const searched = needles();

  it('searches the registry\'s names', () => {
    const names = searched.map((n) => n.name);
    for (const s of SYSTEMS) expect(names).toContain(s.key);
    expect(names).toEqual(expect.arrayContaining(['pending_lroe', 'delivered', 'offline_pending', 'natura', 'seal_certificate_id', 'subscription_key', 'transaction.sdi_status_changed']));
    expect(names).not.toContain('rejected');
    expect(names).not.toContain('certificate_id');
    expect(sharedFiles().length).toBeGreaterThan(50);
  });

  it('finds none outside src/countries/ (test files aside)', () => {
    const offenders: string[] = [];
    for (const file of sharedFiles()) {
      const lines = fs.readFileSync(path.join(SRC, file), 'utf8').split('\n');
      lines.forEach((text, i) => {
        for (const n of searched) {
          if (n.pattern.test(text) && !allowed(file, n.name)) offenders.push(`src/${file}:${i + 1}: ${n.name} (${n.what}): ${text.trim()}`);
        }
      });
    }
    expect(offenders, `shared files naming a plug-in's facts:\n${offenders.join('\n')}`).toEqual([]);
  });

  it('allows nothing it does not need (each allowance still matches)', () => {
    for (const a of ALLOWED) {
      const files = sharedFiles().filter((f) => a.file.test(f));
      const used = files.some((f) => {
        const text = fs.readFileSync(path.join(SRC, f), 'utf8');
        return searched.some((n) => (a.names === '*' || a.names.includes(n.name)) && n.pattern.test(text));
      });
      expect(used, `allowance ${a.file} (${a.why}) is no longer needed`).toBe(true);
    }
  });
});
