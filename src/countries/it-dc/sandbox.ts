/**
 * Stub Agenzia delle Entrate for Documento Commerciale: accepting returns the authority's
 * id of the document (kept as the upstream id; our document number stays the fiscal id).
 * No public API describes that id's shape; 20 digits stand in until the Italy issue.
 */
import { derivedDigits, type SandboxSpec } from '../shared/sandbox.ts';
import { DC_CODES } from './codes.ts';

export const dcSandbox: SandboxSpec = {
  system: 'it-dc',
  authority: "the Agenzia delle Entrate",
  codes: DC_CODES,
  accept: (record) => {
    const id = derivedDigits(record.transactionId, 'ade-dc-document', 20);
    return { upstreamId: id, response: { esito: 'accepted', document_id: id, document_number: record.fiscalId } };
  },
};
