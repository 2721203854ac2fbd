/**
 * Test fixtures (not a test file): one issuer's VERI*FACTU chain on the fixed clock, the
 * records the golden files hold. Each record is built with the previous one's huella and
 * linkData, as the core hands them, so the chain is the one AEAT would receive.
 */
import type { BuildInput, FiscalRecord, TransactionDraft } from '../types.ts';
import { NOW, SOFTWARE, buildInput, draft, line, location, validatedBuild } from '../shared/test-fixtures.ts';
import { RECARGO_SALE, replacingBuild } from '../es/test-fixtures.ts';
import { verifactu } from './index.ts';

export interface GoldenCase {
  /** File name under golden/. */
  file: string;
  kind: 'record' | 'cancellation';
  transactionId: string;
  tx: TransactionDraft;
  record: FiscalRecord;
}

const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);
const customer = { nif: 'B64717838', name: 'Cliente Ejemplo SA' };

/** The chain, in generation order: F2, F2, F1 (two VAT rates), R5, R1, RegistroAnulacion, F2 with an exempt line, F1 with recargo de equivalencia. */
export function goldenChain(loc = location('es-verifactu')): GoldenCase[] {
  const out: GoldenCase[] = [];
  const previous = (): BuildInput['chain']['previous'] => {
    const last = out.at(-1);
    return last ? { fingerprint: last.record.fingerprint, fiscalId: null, issuedAt: NOW.toISOString(), linkData: last.record.linkData } : null;
  };
  const alta = (file: string, tx: TransactionDraft, seconds: number) => {
    const seq = out.length + 1;
    const transactionId = `00000000-0000-4000-8000-00000000000${seq}`;
    const built = validatedBuild(verifactu, loc, tx, { transactionId, now: at(seconds), chain: { seq, previous: previous() } });
    out.push({ file, kind: 'record', transactionId, tx: built.tx, record: built.record });
  };

  alta('alta-first.xml', draft(), 0);
  alta('alta-chained.xml', draft({ items: [line({ description: 'Croissant', unit_price: 250, tax_rate: 10, tax_amount: 25, total_amount: 275 })] }), 60);
  alta(
    'alta-f1-customer.xml',
    draft({ customer_context: customer, items: [line(), line({ description: 'Pan', unit_price: 300, tax_rate: 4, tax_amount: 12, total_amount: 312 })] }),
    120,
  );
  alta('alta-r5-refund.xml', draft({ type: 'refund' }), 180);
  alta('alta-r1-refund.xml', draft({ type: 'refund', customer_context: customer, metadata: { original_invoice_number: 'A-3', original_issue_date: '15-01-2026' } }), 240);

  // The annulment of the first invoice.
  const first = out[0]!;
  const seq = out.length + 1;
  const transactionId = `00000000-0000-4000-8000-00000000000${seq}`;
  const record = verifactu.build({
    transactionId,
    kind: 'cancellation',
    tx: first.tx,
    original: { transactionId: first.transactionId, fiscalId: null, tx: first.tx, issuedAt: NOW.toISOString(), documentNumber: first.record.documentNumber },
    location: loc,
    environment: 'test',
    now: at(300),
    chain: { seq, previous: previous() },
    software: SOFTWARE,
  });
  out.push({ file: 'anulacion.xml', kind: 'cancellation', transactionId, tx: first.tx, record });

  // After the annulment, so the records above keep their bytes: an exempt operation (E1,
  // e.g. a medical service) beside a taxed line, one DetalleDesglose each.
  alta(
    'alta-exempt.xml',
    draft({
      metadata: { exemption_code: 'E1' },
      items: [line({ description: 'Consulta médica', unit_price: 6000, tax_rate: 0, tax_amount: 0, total_amount: 6000 }), line()],
    }),
    360,
  );

  // After the exempt sale, so every file above keeps its bytes: a wholesaler's full invoice
  // to a retailer in recargo de equivalencia (LIVA arts. 154-163). Goods at 21 % and 10 %
  // with their surcharges (5.2 %, 1.4 %: DetalleDesglose of ClaveRegimen 18), a service
  // (transport) at 21 % without one (ClaveRegimen 01): three details.
  alta(
    'alta-recargo.xml',
    draft({
      customer_context: { nif: 'B64717838', name: 'Ultramarinos Ejemplo SL' },
      ...RECARGO_SALE,
    }),
    420,
  );
  return out;
}

/**
 * A Canary Islands shop (IGIC, Impuesto 03) and a Ceuta one (IPSI, Impuesto 02), each the
 * first record of its own issuer's chain (country_config.tax: ../es/tax.ts).
 */
export function goldenTaxCases(): GoldenCase[] {
  const first = (file: string, tax: 'igic' | 'ipsi', tx: TransactionDraft, seq: number): GoldenCase => {
    const transactionId = `00000000-0000-4000-8000-0000000001${seq}0`;
    const built = validatedBuild(verifactu, location('es-verifactu', { tax }), tx, { transactionId, chain: { seq: 1, previous: null } });
    return { file, kind: 'record', transactionId, tx: built.tx, record: built.record };
  };
  return [
    first('alta-igic.xml', 'igic', draft({
      items: [
        line({ description: 'Papas arrugadas', quantity: 2, unit_price: 450, tax_rate: 7, tax_amount: 63, total_amount: 963 }),
        line({ description: 'Pan', quantity: 1, unit_price: 120, tax_rate: 0, tax_amount: 0, total_amount: 120 }),
      ],
    }), 1),
    first('alta-ipsi.xml', 'ipsi', draft({
      items: [line({ description: 'Servicio de reparación', quantity: 1, unit_price: 4000, tax_rate: 3, tax_amount: 120, total_amount: 4120 })],
    }), 2),
    // Exempt operations (../es/exemption.ts). IGIC: goods shipped out of the Canary Islands
    // (E2, an export: ClaveRegimen 02, AEAT 1199) beside a sale taxed at 7 % (01). IPSI: an
    // exempt service (E1, ClaveRegimen 01 as every IPSI detail: build.ts IPSI_REGIME) beside one at 3 %.
    first('alta-igic-exempt.xml', 'igic', draft({
      customer_context: { nif: 'B64717838', name: 'Cliente Ejemplo SA' },
      metadata: { exemption_code: 'E2' },
      items: [
        line({ description: 'Plátanos (exportación)', quantity: 10, unit_price: 300, tax_rate: 0, tax_amount: 0, total_amount: 3000 }),
        line({ description: 'Embalaje', quantity: 1, unit_price: 500, tax_rate: 7, tax_amount: 35, total_amount: 535 }),
      ],
    }), 3),
    first('alta-ipsi-exempt.xml', 'ipsi', draft({
      metadata: { exemption_code: 'E1' },
      items: [
        line({ description: 'Consulta médica', quantity: 1, unit_price: 5000, tax_rate: 0, tax_amount: 0, total_amount: 5000 }),
        line({ description: 'Servicio de reparación', quantity: 1, unit_price: 4000, tax_rate: 3, tax_amount: 120, total_amount: 4120 }),
      ],
    }), 4),
  ];
}

/**
 * The customer of two tickets of the chain (the second and the exempt one, both F2) asks for
 * an invoice with their name and NIF: a full invoice (F3) that replaces them, naming each in
 * FacturasSustituidas (../es/replacement.ts). The next link after `chain`, apart from it so
 * the chain's own tests keep their length.
 */
export function goldenReplacementCase(chain = goldenChain(), loc = location('es-verifactu')): GoldenCase {
  const last = chain.at(-1)!;
  const seq = chain.length + 1;
  const transactionId = `00000000-0000-4000-8000-00000000000${seq}`;
  const tickets = [chain[1]!, chain.find((c) => c.file === 'alta-exempt.xml')!].map((c) => ({ ...c, issuedAt: NOW }));
  const built = replacingBuild(
    verifactu, loc,
    draft({
      customer_context: customer,
      // The same lines as the tickets, the exempt one's cause with them.
      metadata: { replaces_simplified: tickets.map((t) => t.transactionId), exemption_code: 'E1' },
      items: tickets.flatMap((t) => t.tx.items),
    }),
    tickets,
    {
      transactionId, now: at(480),
      chain: { seq, previous: { fingerprint: last.record.fingerprint, fiscalId: null, issuedAt: NOW.toISOString(), linkData: last.record.linkData } },
    },
  );
  return { file: 'alta-f3-replaces.xml', kind: 'record', transactionId, tx: built.tx, record: built.record };
}

/**
 * The client's invoice A-2026-9, issued again the same day after AEAT refused its first
 * record (the core hands the refused one as `earlierIssues`): an "alta por rechazo",
 * `Subsanacion` S and `RechazoPrevio` X (build.ts `reissueFlags`). The next link after
 * `chain` (the refused record is one of the chain's in the service; here the chain's last
 * stands for it), apart from it so the chain's own tests keep their length.
 */
export function goldenReissueCase(chain = goldenChain(), loc = location('es-verifactu')): GoldenCase {
  const last = chain.at(-1)!;
  const seq = chain.length + 1;
  const transactionId = `00000000-0000-4000-8000-0000000002${seq}0`;
  const built = validatedBuild(verifactu, loc, draft({ metadata: { invoice_number: '2026-9' } }), {
    transactionId, now: at(540),
    chain: { seq, previous: { fingerprint: last.record.fingerprint, fiscalId: null, issuedAt: NOW.toISOString(), linkData: last.record.linkData } },
    earlierIssues: [{ transactionId: '00000000-0000-4000-8000-000000000290', issuedAt: at(30).toISOString(), documentNumber: 'A-2026-9', status: 'failed_permanent' }],
  });
  return { file: 'alta-reissue.xml', kind: 'record', transactionId, tx: built.tx, record: built.record };
}

/**
 * Subsanaciones (correction.ts) of the chain's F1 (alta-f1-customer.xml): its customer's name
 * and the description corrected, chained after the chain's last record. `rechazo`: an earlier
 * subsanación of it was refused (Subsanacion S, RechazoPrevio S).
 */
export function goldenSubsanacionCase(chain = goldenChain(), rechazo = false, loc = location('es-verifactu')): GoldenCase {
  const corrected = chain.find((c) => c.file === 'alta-f1-customer.xml')!;
  const last = chain.at(-1)!;
  const rule = verifactu.correct!;
  const tx: TransactionDraft = {
    ...corrected.tx,
    customer_context: { ...customer, name: 'Cliente Ejemplo Sociedad Anónima' },
    metadata: { ...corrected.tx.metadata, description: 'Menú y pan' },
  };
  const metadata = rule.validate(tx, corrected.tx, { location: loc, environment: 'test', now: at(120) });
  const input = buildInput(loc, { ...tx, metadata }, {
    transactionId: corrected.transactionId, now: at(600),
    chain: { seq: chain.length + 1, previous: { fingerprint: last.record.fingerprint, fiscalId: null, issuedAt: NOW.toISOString(), linkData: last.record.linkData } },
  });
  const record = rule.build({
    ...input, tx: { ...tx, metadata }, earlierRefused: rechazo,
    original: {
      transactionId: corrected.transactionId, documentNumber: corrected.record.documentNumber ?? null, issuedAt: at(120).toISOString(),
      fiscalId: null, upstreamId: null, body: corrected.record.body,
    },
  });
  return { file: rechazo ? 'alta-subsanacion-rechazo.xml' : 'alta-subsanacion.xml', kind: 'record', transactionId: corrected.transactionId, tx: { ...tx, metadata }, record };
}

/**
 * A full invoice issued days after the operation (RD 1619/2012 art. 6.1.f): the goods were
 * delivered on 09-01-2026 and invoiced on the fixed clock's 15-01-2026, so the record states
 * `FechaOperacion` 09-01-2026 (../es/operation-date.ts), before DescripcionOperacion. The next
 * link after `chain`, apart from it so the chain's own tests keep their length. `operationDate`
 * null: the same invoice without it.
 */
export function goldenOperationDateCase(chain = goldenChain(), operationDate: string | null = '09-01-2026', loc = location('es-verifactu')): GoldenCase {
  const last = chain.at(-1)!;
  const seq = chain.length + 1;
  const transactionId = `00000000-0000-4000-8000-0000000003${seq}0`;
  const built = validatedBuild(verifactu, loc, draft({ customer_context: customer, metadata: { operation_date: operationDate, description: 'Suministro de material' } }), {
    transactionId, now: at(660),
    chain: { seq, previous: { fingerprint: last.record.fingerprint, fiscalId: null, issuedAt: NOW.toISOString(), linkData: last.record.linkData } },
  });
  return { file: 'alta-operation-date.xml', kind: 'record', transactionId, tx: built.tx, record: built.record };
}
