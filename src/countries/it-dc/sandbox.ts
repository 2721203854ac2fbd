/**
 * Stub Agenzia delle Entrate for commercial documents (test keys, `stub` mode). It
 * answers what AdE would, as AdE's own XML (answers.ts), read by the same parser as
 * real answers (response.ts): sending answers `sent` with an operation id, and the
 * result comes from `poll`, one second later (the spec: `pending` until the polled
 * result). With `metadata.sandbox_outcome`:
 *
 * - accept (default) → Esito AC: `success`;
 * - reject:0100 → the send is refused at once (EsitoOperazione error 00000, not the
 *   schema); reject:0403 → HTTP 403 (certificate not authorised): `failed` at once;
 * - reject:<other code> (0200, or an AdE code such as 00308) → the send is taken and the
 *   result is Esito SC with that error: `failed` after the poll; reject:00306 (duplicate
 *   file) → AdE already holds it: `success`;
 * - error:0429 → HTTP 429, error:<other> → HTTP 500: retried (0429 / 0500);
 * - timeout → no answer (a transport fault), as every stub.
 *
 * Operation ids are derived from the transaction id (stable across retries).
 */
import { derivedDigits, outcomeOf, runSandbox, type SandboxSpec } from '../shared/sandbox.ts';
import type { AuthorityOutcome, StoredRecord, SubmitContext } from '../types.ts';
import { esitoDocumentoXml, esitoOperazioneXml } from './answers.ts';
import { DC_CODES } from './codes.ts';
import { resultOutcome, sendOutcome, type AdeAnswer } from './response.ts';

/** Seconds the stub lets pass before the result is asked for. */
export const STUB_POLL_AFTER_SECONDS = 1;

const spec: SandboxSpec = {
  system: 'it-dc',
  authority: 'the Agenzia delle Entrate',
  codes: DC_CODES,
  accept: () => ({ response: {} }),
};

export const stubOperationId = (transactionId: string): string => derivedDigits(transactionId, 'ade-dc-operation', 18);

/** The AdE code a rehearsed rejection stands for (the stub speaks AdE's five-digit codes). */
const adeCodeOf = (code: string): string => (code === '0100' ? '00000' : code === '0200' ? '00308' : code);

const sandboxMarked = (outcome: AuthorityOutcome): AuthorityOutcome => {
  const o = { ...outcome, response: { ...outcome.response, sandbox: true } } as AuthorityOutcome;
  return o.kind === 'sent' ? { ...o, pollAfterSeconds: STUB_POLL_AFTER_SECONDS } : o;
};

function sendAnswer(record: StoredRecord): AdeAnswer {
  const outcome = outcomeOf(record);
  const id = stubOperationId(record.transactionId);
  if (outcome.kind === 'error') return { status: outcome.code === '0429' ? 429 : 500, body: '' };
  if (outcome.kind === 'reject' && outcome.code === '0403') return { status: 403, body: '' };
  if (outcome.kind === 'reject' && outcome.code === '0100') {
    return { status: 200, body: esitoOperazioneXml({ idOperazione: id, errors: [{ codice: '00000', descrizione: 'Il file non rispetta lo schema XSD (sandbox)' }] }) };
  }
  return { status: 200, body: esitoOperazioneXml({ idOperazione: id }) };
}

function resultAnswer(record: StoredRecord, ctx: SubmitContext, operationId: string): AdeAnswer {
  const outcome = outcomeOf(record);
  const at = ctx.now.toISOString();
  if (outcome.kind === 'reject') {
    const codice = adeCodeOf(outcome.code);
    const descrizione = DC_CODES[outcome.code]?.message ?? `Errore ${codice} (sandbox)`;
    return { status: 200, body: esitoDocumentoXml({ idOperazione: operationId, at, esito: 'SC', documents: 1, errors: [{ codice, descrizione }] }) };
  }
  return { status: 200, body: esitoDocumentoXml({ idOperazione: operationId, at, esito: 'AC', documents: 1 }) };
}

export async function dcStubSubmit(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  // A rehearsed timeout is the shared stub's transport fault.
  if (outcomeOf(record).kind === 'timeout') return runSandbox(record, ctx, spec);
  return sandboxMarked(sendOutcome(sendAnswer(record)));
}

export async function dcStubPoll(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  const operationId = record.upstreamId ?? stubOperationId(record.transactionId);
  return sandboxMarked(resultOutcome(resultAnswer(record, ctx, operationId), operationId));
}
