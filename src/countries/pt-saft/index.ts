/**
 * Portugal (certified invoicing software, SAF-T PT): documents are signed locally with
 * the producer key (Portaria 363/2010, signature.ts) and hash-chained per series and
 * type, which makes them final (`success` at creation); they reach the AT in the monthly
 * SAF-T (PT) file (saft-file.ts `buildSaftFile`), not one by one: the `portugal/saft`
 * processor produces and keeps each closed month's file (processor.ts), which inspectors
 * fetch at `GET /v1/locations/{id}/saft?period=YYYY-MM` (month-file.ts).
 */
import type { FiscalSystem } from '../types.ts';
import { chainKeyOf } from '../shared/chain-key.ts';
import { stubOnlySubmit } from '../shared/sandbox.ts';
import { validateSaftConfig } from './config.ts';
import { EXEMPTION_LINE_FIELD, documentTypeOf, seriesEntryOf, validateSaftTransaction } from './metadata.ts';
import { buildSaft, prepareSaft } from './build.ts';
import { saftQrPng } from './qr-image.ts';
import { saftSandbox } from './sandbox.ts';
import { SAFT_CODES } from './codes.ts';
import { SAFT_LOCATION_FILE } from './month-file.ts';
import { createSaftProcessor } from './processor.ts';
import { verifySaftRecord } from './verify.ts';
import { SAFT_RECEIPT } from './receipt.ts';
import { saftCreditedDocument } from './credit-note.ts';

export const saft: FiscalSystem<'pt-saft', 'PT'> = {
  key: 'pt-saft',
  country: 'PT',
  version: '1.0.0',
  capabilities: {
    signsLocally: true,
    chained: true,
    submission: 'none',
    authorityTransport: false,
    // Cancelling marks the original document A (anulado): no new number, no new link.
    cancellationJoinsChain: false,
    // The core hands build the key of the certificate `at_certificate_id` names (the
    // producer's key pair AT certified), or on test keys the account's sandbox one. The
    // certificate is optional: without one, the service's configured producer key
    // (PT_SOFTWARE_KEY_FILE) signs (signature.ts `producerKey`).
    signsWithCertificate: true,
    certificateOptional: true,
  },
  validateConfig: validateSaftConfig,
  secretConfigFields: [],
  certificateFields: ['at_certificate_id'],
  validateTransaction: validateSaftTransaction,
  // A credit note (NC) names a document of its location and credits at most what it has
  // left (credit-note.ts): the core reads that document at its place in the chain.
  correctedSale: saftCreditedDocument,
  // The AT exemption code of a 0 % line (tax.ts), M99 when absent.
  lineFields: [EXEMPTION_LINE_FIELD],
  // The hash chain and the numbering run per series and document type (Portaria 363/2010
  // art. 6: the previous document "of the same series and type"): key "<type> <series>".
  chainKey: ({ location, tx }) => {
    const type = documentTypeOf(tx);
    return chainKeyOf('pt-saft', location.id, `${type} ${seriesEntryOf(location, type)?.prefix ?? ''}`);
  },
  initialStatus: () => 'success',
  build: buildSaft,
  prepare: prepareSaft,
  // verify-chain (src/cli/verify-chain.ts): fingerprint, signature and link of a stored record.
  verifyRecord: verifySaftRecord,
  // The QR drawn on demand (GET /v1/transactions/{id}/qr.png) from the `qr` hint: AT's level M, version >= 9.
  qrImage: { hintKey: 'qr', png: saftQrPng },
  submit: stubOnlySubmit(saftSandbox),
  codes: SAFT_CODES,
  processors: (deps) => [createSaftProcessor(deps)],
  locationFiles: [SAFT_LOCATION_FILE],
  receipt: SAFT_RECEIPT,
};
