/**
 * The plug-in contract, checked for every system at once: capabilities, chain keys,
 * deterministic builds (placeholders until a country's real format lands), and the
 * sandbox magic values.
 */
import { describe, it, expect } from 'vitest';
import { SYSTEMS } from './registry.ts';
import { TransportError, type BuildInput, type FiscalSystem, type LocationForFiscal, type SystemKey, type TransactionDraft } from './types.ts';
import { SANDBOX_OUTCOME_INVALID } from './shared/sandbox.ts';
import { expect400 } from './shared/test-helpers.ts';
import { CONFIGS, LOCATION_ID, NOW, TX_ID, draft, line, fixedRecordKey, fixedSigningKey, location, stored, submitCtx, txCtx, validatedBuild } from './shared/test-fixtures.ts';
import type { FiscalRecord } from './types.ts';
import { goldenProducerKey } from './pt-saft/golden-cases.ts';
import { verifyHash } from './pt-saft/signature.ts';

/**
 * A record with its ECDSA signature values taken out: systems signing with a record key
 * (`capabilities.recordKey`, NF525) sign with random nonces, so two builds of the same
 * record differ there only (each signature verifies: the system's own tests check them).
 */
function withoutEcdsaSignatures(system: FiscalSystem, r: FiscalRecord): FiscalRecord {
  if (system.capabilities.recordKey === undefined || r.fingerprint === null) return r;
  const strip = (text: string) => text.split(r.fingerprint!).join('<signature>');
  return {
    ...r,
    body: strip(r.body),
    fingerprint: '<signature>',
    renderHints: r.renderHints.map((h) => (h.key === 'signature_extract' ? { ...h, value: '<extract>' } : h)),
  };
}

/**
 * The keys a system signs with in these tests: fixedSigningKey(), but for SAF-T PT, which
 * signs with an RSA-1024 producer key (pt-saft/signature.ts); the fixed P-256 record key
 * for systems that sign with one (NF525).
 */
const keyFor = (system: FiscalSystem) => ({
  ...(system.capabilities.signsWithCertificate ? { signingKey: system.key === 'pt-saft' ? goldenProducerKey() : fixedSigningKey() } : {}),
  ...(system.capabilities.recordKey !== undefined ? { recordKey: fixedRecordKey() } : {}),
});
function build(system: FiscalSystem, loc: LocationForFiscal, tx: TransactionDraft, over: Partial<BuildInput> = {}) {
  return validatedBuild(system, loc, tx, { ...keyFor(system), ...over });
}

/** A sale each system accepts with the given extra metadata. */
function validSale(key: SystemKey, metadata: Record<string, unknown> = {}) {
  const base: Partial<Record<SystemKey, Record<string, unknown>>> = {
    'it-sdi': { invoice_number: '2026/1' },
    'es-sii': { simplified: true },
  };
  // myDATA has a VAT category for Greek rates only (gr-mydata/classification.ts); France
  // takes French rates only (fr-nf525/rates.ts): draft()'s line is at 21 %.
  const rateOf: Partial<Record<SystemKey, number>> = { 'gr-mydata': 24, 'fr-nf525': 20 };
  const rate = rateOf[key];
  const items = rate === undefined ? {} : { items: [line({ tax_rate: rate, tax_amount: rate * 10, total_amount: 1000 + rate * 10 })] };
  return draft({ ...items, metadata: { ...base[key], ...metadata } });
}

/** myDATA's fingerprint is the document's UID (SHA-1, uppercase hex), not a chain link. */
const unchainedFingerprint = (key: SystemKey) => (key === 'gr-mydata' ? expect.stringMatching(/^[0-9A-F]{40}$/) : null);

const EXPECTED: Record<SystemKey, { chained: boolean; submission: string; initial: string; window?: number; authority?: boolean }> = {
  'es-ticketbai': { chained: true, submission: 'realtime', initial: 'pending', window: 4, authority: true },
  'es-verifactu': { chained: true, submission: 'realtime', initial: 'pending', window: 4, authority: true },
  'es-sii': { chained: false, submission: 'realtime', initial: 'pending', window: 4, authority: true },
  'it-sdi': { chained: false, submission: 'notification', initial: 'pending', window: 12, authority: true },
  'it-dc': { chained: true, submission: 'realtime', initial: 'pending', window: 12, authority: true },
  'fr-nf525': { chained: true, submission: 'none', initial: 'success' },
  'pt-saft': { chained: true, submission: 'none', initial: 'success' },
  'gr-mydata': { chained: false, submission: 'realtime', initial: 'pending', authority: true },
};

describe.each(SYSTEMS.map((s) => [s.key, s] as [SystemKey, FiscalSystem]))('%s', (key, system) => {
  const loc = location(key);

  it('fixture config is what validateConfig stores', () => {
    expect(system.validateConfig({ config: CONFIGS[key].config, taxId: CONFIGS[key].taxId })).toEqual(CONFIGS[key].config);
  });

  it('event aliases name events the system announces, and no event or status of another', () => {
    for (const [alias, event] of Object.entries(system.eventAliases ?? {})) {
      expect(system.events ?? []).toContain(event);
      expect(system.events ?? []).not.toContain(alias);
    }
  });

  it('capabilities', () => {
    const e = EXPECTED[key];
    expect(system.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(system.capabilities.authorityTransport).toBe(e.authority ?? false);
    expect(system.capabilities.chained).toBe(e.chained);
    expect(system.capabilities.submission).toBe(e.submission);
    expect(system.capabilities.submissionWindowDays).toBe(e.window);
    expect(system.initialStatus(loc)).toBe(e.initial);
  });

  it('chainKey is <system>:<location id>:<series> (VERI*FACTU: <system>:<account>:<issuer NIF>; TicketBAI: …:<territory>; myDATA: <system>:<account>:<afm>:<branch>:<series>)', () => {
    const tx = { ...validSale(key), metadata: system.validateTransaction(validSale(key), txCtx(loc)) };
    // VERI*FACTU chains every record of the obligated issuer, across series and locations (FORMATS.md §2.4);
    // TicketBAI the issuer's records in one territory (one Diputación, one licence).
    const expected = key === 'es-verifactu'
      ? `^${key}:${loc.account_id}:${loc.tax_id}$`
      : key === 'es-ticketbai' ? `^${key}:${loc.account_id}:${loc.tax_id}:${String(loc.config.territory)}$`
      // myDATA numbers a series per AFM and branch, whichever location issues (gr-mydata/index.ts).
      : key === 'gr-mydata' ? `^${key}:${loc.account_id}:${String(loc.config.afm)}:${String(loc.config.branch)}:.+$` : `^${key}:${LOCATION_ID}:.+$`;
    expect(system.chainKey({ location: loc, tx })).toMatch(new RegExp(expected));
  });

  it('refuses a non-EUR currency', () => {
    const name = { ES: 'Spain', IT: 'Italy', FR: 'France', PT: 'Portugal', GR: 'Greece' }[system.country];
    expect400(() => system.validateTransaction({ ...validSale(key), currency: 'USD' }, txCtx(loc)), `currency must be EUR for ${name} locations`);
  });

  it('refuses a malformed sandbox_outcome, keeps a valid one', () => {
    expect400(() => system.validateTransaction(validSale(key, { sandbox_outcome: 'explode' }), txCtx(loc)), SANDBOX_OUTCOME_INVALID);
    expect(system.validateTransaction(validSale(key, { sandbox_outcome: 'reject:X1' }), txCtx(loc)).sandbox_outcome).toBe('reject:X1');
  });

  it('keeps the client metadata keys', () => {
    expect(system.validateTransaction(validSale(key, { order_ref: 'ORD-7' }), txCtx(loc)).order_ref).toBe('ORD-7');
  });

  it('builds deterministically (but for ECDSA nonces); a placeholder says so, a real record is the system\'s XML or signed JSON', () => {
    const a = build(system, loc, validSale(key)).record;
    const b = build(system, loc, validSale(key)).record;
    expect(withoutEcdsaSignatures(system, a)).toEqual(withoutEcdsaSignatures(system, b));
    if (!a.placeholder) {
      // The real formats: XML, validated against the official XSDs in each system's own
      // tests; France's NF525 record is signed JSON (its référentiel is not public).
      if (key === 'fr-nf525') {
        expect(a.contentType).toBe('application/json');
        expect(JSON.parse(a.body)).toMatchObject({ format: 'nf525.record', transaction_id: TX_ID });
        return;
      }
      expect(a.contentType).toBe('application/xml');
      expect(a.body.startsWith('<')).toBe(true);
      return;
    }
    expect(a.contentType).toBe('application/json');
    const body = JSON.parse(a.body) as Record<string, unknown>;
    expect(body).toMatchObject({ placeholder: true, transaction_id: TX_ID, kind: 'record', issued_at: NOW.toISOString() });
    expect(body.format).toEqual(expect.any(String));
    expect(body.note).toMatch(/^minimal placeholder: the real .+ is built in the (Spain|Italy|France|Portugal|Greece) issue$/);
    // Canonical: keys sorted at the top level.
    const keys = Object.keys(body);
    expect(keys).toEqual([...keys].sort());
  });

  it('fingerprint: chained systems link to the previous record, others have none', () => {
    const first = build(system, loc, validSale(key)).record;
    const second = build(system, loc, validSale(key), {
      chain: { seq: 2, number: 2, previous: { fingerprint: first.fingerprint, fiscalId: first.fiscalId, issuedAt: NOW.toISOString(), linkData: first.linkData ?? null } },
    }).record;
    if (!system.capabilities.chained) {
      expect(first.fingerprint).toEqual(unchainedFingerprint(key));
      return;
    }
    expect(second.fingerprint).not.toBe(first.fingerprint);
    if (first.placeholder) {
      expect(first.fingerprint).toMatch(/^[0-9a-fA-F]{64}$/);
      expect(JSON.parse(second.body).chain).toEqual({ seq: 2, previous_fingerprint: first.fingerprint });
    } else if (key === 'pt-saft') {
      // SAF-T PT: the link is inside the signature: the Hash signs the previous one (Portaria 363/2010 art. 6).
      expect(verifyHash(`2026-01-15;2026-01-15T10:00:00;FS A2026/2;12.10;${first.fingerprint}`, second.fingerprint!, goldenProducerKey().certificatePem)).toBe(true);
    } else {
      // The real link: VERI*FACTU repeats the previous huella; TicketBAI the first 100
      // characters of the previous SignatureValue (FORMATS §1.5, §2.4).
      expect(first.fingerprint).toEqual(expect.any(String));
      expect(second.body).toContain(key === 'es-ticketbai' ? first.fingerprint!.slice(0, 100) : first.fingerprint!);
    }
  });

  it('builds a cancellation naming the original', () => {
    const { tx, record } = build(system, loc, validSale(key));
    const cancel = system.build({
      transactionId: '99999999-8888-4777-8666-555555555555',
      kind: 'cancellation',
      tx,
      original: { transactionId: TX_ID, fiscalId: record.fiscalId, tx, issuedAt: NOW.toISOString(), documentNumber: record.documentNumber ?? null },
      location: loc,
      environment: 'test',
      now: NOW,
      chain: { seq: 2, previous: { fingerprint: record.fingerprint, fiscalId: record.fiscalId, issuedAt: NOW.toISOString(), linkData: record.linkData ?? null } },
      software: { name: 'x', version: '1', vendorTaxId: 'A99800005' },
      ...keyFor(system),
    });
    if (cancel.placeholder) {
      const body = JSON.parse(cancel.body) as Record<string, unknown>;
      expect(body).toMatchObject({ placeholder: true, kind: 'cancellation', original: { transaction_id: TX_ID } });
    } else {
      expect(cancel.contentType).toBe(key === 'fr-nf525' ? 'application/json' : 'application/xml');
      expect(record.documentNumber).toEqual(expect.any(String));
      expect(cancel.body).toContain(record.documentNumber!);
    }
    if (!system.capabilities.cancellationJoinsChain) expect(cancel.fingerprint).toEqual(unchainedFingerprint(key));
    if (system.capabilities.cancellationJoinsChain && system.capabilities.chained) {
      // A SHA-256 (hex), or, for a record key, the ES256 signature itself (base64url of r||s).
      expect(cancel.fingerprint).toMatch(system.capabilities.recordKey !== undefined ? /^[A-Za-z0-9_-]{86}$/ : /^[0-9a-fA-F]{64}$/);
    }
  });

  it('sandbox: timeout is a transport fault (thrown, or answered as the real client answers one), error:<code> is retry_later; without a client, authority mode is not implemented', async () => {
    const { tx, record } = build(system, loc, validSale(key, { sandbox_outcome: 'timeout' }));
    const timeout = await system.submit(stored(record, tx), submitCtx(loc)).catch((err: unknown) => err);
    // A client that turns transport faults into an outcome (myDATA: `transient`) answers the stub's the same way.
    if (timeout instanceof TransportError) expect(timeout.code).toBeTruthy();
    else expect(timeout).toMatchObject({ kind: 'retry_later', code: 'timeout' });
    const err = build(system, loc, validSale(key, { sandbox_outcome: 'error:0500' }));
    await expect(system.submit(stored(err.record, err.tx), submitCtx(loc))).resolves.toMatchObject({ kind: 'retry_later', code: '0500' });
    // Systems with a real client are tested against their fake authorities (their own tests).
    if (!system.capabilities.authorityTransport) {
      await expect(system.submit(stored(record, tx), submitCtx(loc, 'authority'))).rejects.toMatchObject({ code: 'not_implemented' });
    }
  });

  it('sandbox: accept by default; reject:<code> gives the code with a message', async () => {
    const ok = build(system, loc, validSale(key));
    const outcome = await system.submit(stored(ok.record, ok.tx), submitCtx(loc));
    // A notification system's stub answers `sent` with the notification to come (it-sdi/sandbox.ts).
    const notified = system.capabilities.submission === 'notification';
    // A polled system's stub answers `sent`; its `poll` gives the result (it-dc/sandbox.ts).
    const polled = system.poll !== undefined;
    expect(outcome.kind).toBe(notified || polled ? 'sent' : 'accepted');
    expect(await system.submit(stored(ok.record, ok.tx), submitCtx(loc))).toEqual(outcome); // deterministic
    const rej = build(system, loc, validSale(key, { sandbox_outcome: 'reject:ZZ9' }));
    const r = await system.submit(stored(rej.record, rej.tx), submitCtx(loc));
    if (notified) expect(r).toMatchObject({ kind: 'sent', notifications: [{ body: expect.stringContaining('ZZ9') }] });
    else if (polled) {
      const upstreamId = r.kind === 'sent' ? r.upstreamId : undefined;
      const result = await system.poll!({ ...stored(rej.record, rej.tx), upstreamId }, submitCtx(loc));
      // Italy DC reports the spec's codes: an AdE code it does not know is a validation error, named in the message.
      expect(result).toMatchObject({ kind: 'rejected', code: expect.any(String), message: expect.stringContaining('ZZ9') });
      expect(system.codes[(result as { code: string }).code]).toBeDefined();
    } else expect(r).toMatchObject({ kind: 'rejected', code: 'ZZ9', message: expect.stringContaining('ZZ9') });
  });

  it('codes table entries are complete', () => {
    for (const [code, entry] of Object.entries(system.codes)) {
      expect(code).toMatch(/^[A-Za-z0-9_]+$/);
      expect(entry.message.length).toBeGreaterThan(3);
      expect(typeof entry.retriable).toBe('boolean');
    }
  });
});
