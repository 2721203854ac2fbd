/**
 * Test fixtures (not a test file): transactions, locations and contexts for the fiscal
 * system tests. Fixed clock and ids, so builds are reproducible.
 */
import { readFileSync } from 'node:fs';
import { toSigningKey } from '../../certificates/signing-key.ts';
import type { InProcessSigningKey } from '../../core/signing-key.ts';
import type { InProcessRecordKey } from '../../core/record-key.ts';
import { toRecordKey } from '../../crypto/record-key.ts';
import type {
  AuthorityPacing,
  BuildInput,
  ChainedRecord,
  RecordKey,
  SigningKey,
  Country,
  FiscalRecord,
  FiscalSystem,
  LocationForFiscal,
  StoredRecord,
  SubmitContext,
  SystemKey,
  TransactionContext,
  TransactionDraft,
  TxLine,
  VerifyRecordInput,
} from '../types.ts';

/** 2026-01-15 10:00 UTC: 11:00 in Madrid/Rome/Paris, 10:00 in Lisbon, 12:00 in Athens. */
export const NOW = new Date('2026-01-15T10:00:00.000Z');
export const TX_ID = '0b6f9c1e-3d2a-4c5b-9e8f-7a6b5c4d3e2f';
export const LOCATION_ID = '7d9c5a34-6e1f-4b2a-8c3d-1e2f3a4b5c6d';

export const line = (over: Partial<TxLine> = {}): TxLine => ({
  description: 'Coffee',
  quantity: 1,
  unit_price: 1000,
  tax_rate: 21,
  tax_amount: 210,
  total_amount: 1210,
  ...over,
});

/** A sale of one 10.00 + 21 % line (12.10), paid by card. */
export function draft(over: Partial<TransactionDraft> = {}): TransactionDraft {
  const items = over.items ?? [line()];
  const pretax = items.reduce((s, l) => s + l.total_amount - l.tax_amount, 0);
  const tax = items.reduce((s, l) => s + l.tax_amount, 0);
  return {
    type: 'sale',
    location_id: LOCATION_ID,
    timestamp: NOW.toISOString(),
    currency: 'EUR',
    payment_method: 'card',
    items,
    pretax_amount: pretax,
    tax_amount: tax,
    total_amount: pretax + tax,
    customer_context: null,
    metadata: {},
    ...over,
  };
}

const COUNTRY: Record<SystemKey, Country> = {
  'es-ticketbai': 'ES',
  'es-verifactu': 'ES',
  'es-sii': 'ES',
  'it-sdi': 'IT',
  'it-dc': 'IT',
  'fr-nf525': 'FR',
  'pt-saft': 'PT',
  'gr-mydata': 'GR',
};

/** Validated configs (what the location service stores) and tax ids, per system. */
export const CONFIGS: Record<SystemKey, { config: Record<string, unknown>; taxId: string | null }> = {
  'es-ticketbai': {
    config: { system: 'ticketbai', legal_name: 'Ejemplo SL', territory: 'gipuzkoa', territory_code: '20', tbai_license: 'TBAIGIPRE00000000123' },
    taxId: 'B12345674',
  },
  'es-verifactu': { config: { system: 'verifactu', legal_name: 'Ejemplo SL', software_nif: 'A99800005' }, taxId: 'B12345674' },
  'es-sii': { config: { system: 'sii', legal_name: 'Ejemplo SL', certificate_id: 'cert_1' }, taxId: 'B12345674' },
  'it-sdi': {
    config: { codice_fiscale: '01234567897', formato_trasmissione: 'FPR12', regime_fiscale: 'RF01', partita_iva: '01234567897' },
    taxId: '01234567897',
  },
  'it-dc': {
    config: {
      system: 'dc',
      codice_fiscale: '01234567897',
      legal_name: 'Esempio Srl',
      cau_code: 'AB12',
      pem_matricola: 'ABCD-123456',
      seal_certificate_id: 'seal_1',
      partita_iva: '01234567897',
    },
    taxId: '01234567897',
  },
  'fr-nf525': { config: { legal_name: 'Exemple SAS', register_id: '73282932000074' }, taxId: null },
  'pt-saft': {
    config: {
      software_certificate_number: '9999',
      series: {
        FS: { prefix: 'A2026', atcud_code: 'CSDF7T5H' },
        FT: { prefix: 'B2026', atcud_code: 'AAJFJMVNTN' },
        NC: { prefix: 'C2026', atcud_code: 'JFJMVNTX' },
      },
    },
    taxId: '500000000',
  },
  'gr-mydata': {
    config: {
      afm: '094259216',
      branch: 0,
      legal_name: 'Παράδειγμα ΑΕ',
      aade_user_id: 'user',
      subscription_key: 'k'.repeat(32),
      env: 'sandbox',
      document_class: 'TypeA',
      default_series: 'A',
    },
    taxId: '094259216',
  },
};

export function location(key: SystemKey, configOver: Record<string, unknown> = {}): LocationForFiscal {
  const { config, taxId } = CONFIGS[key];
  return {
    id: LOCATION_ID,
    account_id: '11111111-2222-4333-8444-555555555555',
    name: 'Shop',
    country: COUNTRY[key],
    tax_id: taxId,
    address: null,
    config: { ...config, ...configOver },
  };
}

export const txCtx = (loc: LocationForFiscal, now: Date = NOW): TransactionContext => ({ location: loc, environment: 'test', now });

export const SOFTWARE = { name: 'fiscal-api', version: '0.1.0', vendorTaxId: 'A99800005' };

export function buildInput(loc: LocationForFiscal, tx: TransactionDraft, over: Partial<BuildInput> = {}): BuildInput {
  return {
    transactionId: TX_ID,
    kind: 'record',
    tx,
    location: loc,
    environment: 'test',
    now: NOW,
    chain: { seq: 1, previous: null },
    software: SOFTWARE,
    ...over,
  };
}

/** Validates the draft's metadata as the core would, then builds. */
export function validatedBuild(system: FiscalSystem, loc: LocationForFiscal, tx: TransactionDraft, over: Partial<BuildInput> = {}) {
  const metadata = system.validateTransaction(tx, txCtx(loc));
  const validTx = { ...tx, metadata };
  const signing = {
    ...(system.capabilities.signsWithCertificate ? { signingKey: fixedSigningKey() } : {}),
    ...(system.capabilities.recordKey !== undefined ? { recordKey: fixedRecordKey() } : {}),
  };
  return { tx: validTx, record: system.build(buildInput(loc, validTx, { ...signing, ...over })) };
}

/**
 * An `AuthorityPacing` in memory, with the core's rule (services/authority-pacing.ts: a
 * hold only moves the time forward). Share one between contexts to stand for workers
 * sharing the store.
 */
export function memoryPacing(): AuthorityPacing & { readonly held: ReadonlyMap<string, Date> } {
  const held = new Map<string, Date>();
  return {
    held,
    notBefore: async (key) => held.get(key) ?? null,
    async hold(key, until) {
      const before = held.get(key);
      if (before === undefined || before.getTime() < until.getTime()) held.set(key, until);
    },
  };
}

export const submitCtx = (loc: LocationForFiscal, mode: 'stub' | 'authority' = 'stub'): SubmitContext => ({
  environment: 'test',
  mode,
  location: loc,
  now: NOW,
  timeoutMs: 5000,
  attempt: 1,
  pacing: memoryPacing(),
});

export const stored = (record: FiscalRecord, tx: TransactionDraft, kind: 'record' | 'cancellation' = 'record', id = TX_ID): StoredRecord => ({
  transactionId: id,
  kind,
  body: record.body,
  contentType: record.contentType,
  fiscalId: record.fiscalId,
  tx,
});

/**
 * The fixed RSA key and self-signed certificate of `test/fixtures/signing/` (tests only):
 * signatures over the same bytes are the same, so signed golden files are stable.
 */
let fixedKey: InProcessSigningKey | undefined;
export function fixedSigningKey(): InProcessSigningKey {
  if (fixedKey) return fixedKey;
  const dir = new URL('../../../test/fixtures/signing/', import.meta.url);
  fixedKey = toSigningKey(
    {
      privateKeyPem: readFileSync(new URL('signer-key.pem', dir), 'utf8'),
      certificatePem: readFileSync(new URL('signer-cert.pem', dir), 'utf8'),
      chainPem: [],
    },
    'uploaded',
  );
  return fixedKey;
}

/** The fixed ECDSA P-256 record key of `test/fixtures/signing/record-key-p256.pem` (tests only). */
let fixedEcKey: InProcessRecordKey | undefined;
export function fixedRecordKey(): InProcessRecordKey {
  fixedEcKey ??= toRecordKey('ec-p256', readFileSync(new URL('../../../test/fixtures/signing/record-key-p256.pem', import.meta.url), 'utf8'));
  return fixedEcKey;
}

/** The PEM path of the fixed record key's public key, for `openssl dgst -verify`. */
export const FIXED_RECORD_PUBLIC_KEY_PATH = new URL('../../../test/fixtures/signing/record-key-p256.pub.pem', import.meta.url);

/** A built record as verify-chain reads it back from the store (countries/types.ts `ChainedRecord`). */
export const chained = (record: FiscalRecord, seq: number, previous: FiscalRecord | null, kind: ChainedRecord['kind'] = 'record'): ChainedRecord => ({
  chainKey: 'test-chain', seq, kind, transactionId: `tx-${seq}`, body: record.body, contentType: record.contentType,
  fingerprint: record.fingerprint, previousFingerprint: previous?.fingerprint ?? null, fiscalId: record.fiscalId, documentNumber: record.documentNumber ?? null,
});

/** Runs a system's `verifyRecord` over a run of built records (seq from 1); the first fault, with its seq, or null. */
export function verifyRun(system: FiscalSystem, loc: LocationForFiscal, records: readonly (ChainedRecord | FiscalRecord)[], extra: Partial<VerifyRecordInput> = {}): { seq: number; kind: string; reason: string } | null {
  const list = records.map((r, i) => ('chainKey' in r ? r : chained(r, i + 1, null)));
  for (let i = 0; i < list.length; i++) {
    const fault = system.verifyRecord!({ record: list[i]!, previous: i > 0 ? list[i - 1]! : null, location: loc, environment: 'test', software: SOFTWARE, ...extra });
    if (fault) return { seq: list[i]!.seq, ...fault };
  }
  return null;
}
