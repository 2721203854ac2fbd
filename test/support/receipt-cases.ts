/**
 * Test fixtures (not a test file): one receipt source per fiscal system, built by the
 * real plug-ins on the fixed clock and ids of countries/shared/test-fixtures.ts (Greece:
 * the record answered by the deterministic myDATA sandbox, and the same record while
 * the authority was unreachable, with the offline label the core adds).
 */
import { SYSTEMS } from '../../src/countries/registry.ts';
import type { FiscalRecord, FiscalSystem, RenderHint, SystemKey, TransactionDraft } from '../../src/countries/types.ts';
import { NOW, SOFTWARE, TX_ID, draft, line, location, stored, submitCtx, validatedBuild } from '../../src/countries/shared/test-fixtures.ts';
import { goldenProducerKey } from '../../src/countries/pt-saft/golden-cases.ts';
import type { ReceiptSource } from '../../src/receipts/model.ts';

export interface ReceiptCase {
  name: string;
  system: FiscalSystem;
  source: ReceiptSource;
}

const LINES: Partial<Record<SystemKey, TransactionDraft['items']>> = {
  'gr-mydata': [
    line({ description: 'Φρέντο εσπρέσο', quantity: 2, unit_price: 250, tax_rate: 24, tax_amount: 120, total_amount: 620 }),
    line({ description: 'Τυρόπιτα', quantity: 1, unit_price: 300, tax_rate: 13, tax_amount: 39, total_amount: 339 }),
  ],
  'pt-saft': [line({ description: 'Café', unit_price: 100, tax_rate: 23, tax_amount: 23, total_amount: 123 }), line({ description: 'Pastel de nata', quantity: 2, unit_price: 120, tax_rate: 13, tax_amount: 31, total_amount: 271 })],
  'fr-nf525': [line({ description: 'Croissant au beurre', quantity: 3, unit_price: 100, tax_rate: 5.5, tax_amount: 17, total_amount: 317 })],
  'it-dc': [line({ description: 'Caffè espresso', unit_price: 100, tax_rate: 22, tax_amount: 22, total_amount: 122 })],
};

/** The metadata a system requires of a sale (SII: a simplified invoice; SDI: the buyer). */
const METADATA: Partial<Record<SystemKey, Record<string, unknown>>> = {
  'es-sii': { simplified: true },
  'it-sdi': { invoice_number: 'FT-2026/1', codice_destinatario: 'ABC1234' },
};

/**
 * The location a receipt is printed for, and the one its record was built at: the same, so
 * a record that keeps the shop's name and address (France) prints what it kept.
 */
const shop = (key: SystemKey) => ({ ...location(key), address: 'Calle Mayor 1, 20001' });

function source(system: FiscalSystem, tx: TransactionDraft, record: FiscalRecord, hints: readonly RenderHint[], environment: 'test' | 'live' = 'test'): ReceiptSource {
  const loc = shop(system.key);
  const legal = loc.config.legal_name;
  return {
    transaction: {
      id: TX_ID, type: tx.type, environment, country: loc.country, created_at: NOW,
      fiscal_id: record.fiscalId, document_number: record.documentNumber ?? null, normalized: tx, render_hints: hints, record: record.body,
    },
    location: { name: loc.name, address: loc.address, tax_id: loc.tax_id, legal_name: typeof legal === 'string' ? legal : null },
    system,
    software: SOFTWARE,
  };
}

/** Every system's receipt, plus the Greek offline one. */
export async function receiptCases(): Promise<ReceiptCase[]> {
  const out: ReceiptCase[] = [];
  for (const system of SYSTEMS as readonly FiscalSystem[]) {
    const loc = shop(system.key);
    const items = LINES[system.key];
    // Portugal signs with the AT-certified producer's RSA-1024 key: its golden one.
    const over = system.key === 'pt-saft' ? { signingKey: goldenProducerKey() } : {};
    const { tx, record } = validatedBuild(system, loc, draft({ ...(items ? { items } : {}), metadata: METADATA[system.key] ?? {} }), over);
    // As the core does: an offline system's record made while the authority was unreachable
    // carries its label; the items an authority's answer adds (myDATA: MARK, UID, QR) are
    // appended once it answers (here, its deterministic sandbox).
    if (system.offline) out.push({ name: `${system.key}-offline`, system, source: source(system, tx, record, [...record.renderHints, system.offline.label]) });
    const outcome = await system.submit(stored(record, tx), submitCtx(loc));
    const answered = outcome.kind === 'accepted' ? outcome.renderHints ?? [] : [];
    out.push({ name: system.key, system, source: source(system, tx, record, [...record.renderHints, ...answered]) });
  }
  return out;
}
