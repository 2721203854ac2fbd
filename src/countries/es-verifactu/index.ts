/**
 * VERI*FACTU (RD 1007/2023, Orden HAC/1177/2024): every invoice record is hashed into a
 * chain (huella; no signature is needed in VERI*FACTU mode) and sent to AEAT at once.
 */
import type { FiscalSystem } from '../types.ts';
import { SPAIN_CERTIFICATE_FIELDS } from '../es/common.ts';
import { clientInvoiceNumber } from '../es/invoice.ts';
import { runSandbox, runSandboxMany } from '../shared/sandbox.ts';
import { createVerifactuClient } from './client.ts';
import { validateVerifactuConfig } from './config.ts';
import { seriesOf, validateVerifactuTransaction } from './metadata.ts';
import { buildVerifactu, numSerieOf } from './build.ts';
import { verifactuSandbox } from './sandbox.ts';
import { VERIFACTU_CODES } from './codes.ts';
import { MAX_RECORDS_PER_REQUEST } from './soap.ts';
import { verifyVerifactuRecord } from './verify.ts';
import { VERIFACTU_RECEIPT } from './receipt.ts';

/** The AEAT client. It keeps no state: AEAT's waits (TiempoEsperaEnvio) go to `ctx.pacing`, the core's, shared by every worker. */
const aeat = createVerifactuClient(VERIFACTU_CODES);

export const verifactu: FiscalSystem<'es-verifactu', 'ES'> = {
  key: 'es-verifactu',
  country: 'ES',
  // 0.2.0: real RegistroAlta / RegistroAnulacion XML and the AEAT SOAP client.
  version: '0.2.0',
  capabilities: {
    signsLocally: false,
    chained: true,
    submission: 'realtime',
    submissionWindowDays: 4,
    authorityTransport: true,
    // RegistroAnulacion carries Encadenamiento like an alta (FORMATS §2.4).
    cancellationJoinsChain: true,
    // SuministroLR.xsd: RegistroFactura maxOccurs 1000 per RegFactuSistemaFacturacion
    // (FORMATS.md §2.5). A chain's queued records travel together (jobs/tasks/submit.ts).
    maxRecordsPerRequest: MAX_RECORDS_PER_REQUEST,
  },
  validateConfig: validateVerifactuConfig,
  secretConfigFields: [],
  certificateFields: SPAIN_CERTIFICATE_FIELDS,
  validateTransaction: validateVerifactuTransaction,
  // NumSerieFactura as AEAT reads it.
  issuedDocument: ({ tx }) => clientInvoiceNumber(tx, seriesOf(tx), numSerieOf),
  // The chain runs over every record of the obligated issuer, across series and
  // locations, altas and anulaciones in generation order (FORMATS.md §2.4).
  chainKey: ({ location }) => `es-verifactu:${location.account_id}:${location.tax_id ?? location.id}`,
  // …while invoice numbers run without gaps within each series of the issuer.
  numberingKey: ({ location, tx }) => `es-verifactu:${location.account_id}:${location.tax_id ?? location.id}:${seriesOf(tx)}`,
  initialStatus: () => 'pending',
  build: buildVerifactu,
  // verify-chain (src/cli/verify-chain.ts): fingerprint, signature and link of a stored record.
  verifyRecord: verifyVerifactuRecord,
  submit: async (record, ctx) => (ctx.mode === 'stub' ? runSandbox(record, ctx, verifactuSandbox) : aeat.submit(record, ctx)),
  submitMany: async (records, ctx) => (ctx.mode === 'stub' ? runSandboxMany(records, ctx, verifactuSandbox) : aeat.submitMany(records, ctx)),
  codes: VERIFACTU_CODES,
  errorTranslations: true,
  receipt: VERIFACTU_RECEIPT,
};
