/**
 * Stub AEAT for VERI*FACTU: accepting a submission returns a CSV (código seguro de
 * verificación, 16 uppercase letters and digits), which becomes the fiscal id.
 *
 * `reject:<code>` is read as the real client reads AEAT's code (response.ts): 3000 is a
 * duplicate, and 3001 too on an annulment (`ANNULMENT_HELD_CODES`); elsewhere 3001 is a
 * refusal. A duplicate answers as AEAT's does: no CSV (it is the answer of the submission
 * that registered the record), so no fiscal id, and the warning that says why.
 */
import { withDuplicates } from '../es/sandbox.ts';
import { derivedAlnum, runSandbox, runSandboxMany, type SandboxSpec } from '../shared/sandbox.ts';
import type { AuthorityOutcome, BatchOutcome, StoredRecord, SubmitContext } from '../types.ts';
import { VERIFACTU_CODES } from './codes.ts';
import { ANNULMENT_HELD_CODES, duplicateWarning } from './response.ts';

const spec = (duplicates: readonly string[]): SandboxSpec => ({
  system: 'es-verifactu',
  authority: 'AEAT',
  codes: withDuplicates(VERIFACTU_CODES, duplicates),
  accept: (record) => {
    const csv = derivedAlnum(record.transactionId, 'aeat-csv', 16);
    return { fiscalId: csv, response: { EstadoEnvio: 'Correcto', EstadoRegistro: 'Correcto', CSV: csv } };
  },
});

const HELD = Object.entries(VERIFACTU_CODES).filter(([, c]) => c.duplicate === true).map(([code]) => code);
const ALTA = spec(HELD);
const ANULACION = spec([...HELD, ...ANNULMENT_HELD_CODES]);

/** The stub for an alta (`record`) or a RegistroAnulacion (`cancellation`). */
export const verifactuSandboxFor = (record: Pick<StoredRecord, 'kind'>): SandboxSpec => (record.kind === 'cancellation' ? ANULACION : ALTA);

/** A duplicate as AEAT answers it: the record refused (Incorrecto) with the code, no CSV. */
function asAeatDuplicate(outcome: AuthorityOutcome): AuthorityOutcome {
  if (outcome.kind !== 'duplicate') return outcome;
  const { CSV: _csv, ...response } = outcome.response;
  const code = String(response.code);
  return {
    kind: 'duplicate',
    fiscalId: undefined,
    response: { ...response, EstadoEnvio: 'Incorrecto', EstadoRegistro: 'Incorrecto', CodigoErrorRegistro: code },
    warnings: [duplicateWarning(code, undefined)],
  };
}

export function verifactuStubSubmit(record: StoredRecord, ctx: SubmitContext): AuthorityOutcome {
  return asAeatDuplicate(runSandbox(record, ctx, verifactuSandboxFor(record)));
}

/** Each record as `verifactuStubSubmit` answers it alone (a rehearsed timeout its own retry: runSandboxMany). */
export function verifactuStubSubmitMany(records: readonly StoredRecord[], ctx: SubmitContext): BatchOutcome {
  return {
    kind: 'records',
    outcomes: records.map((record) => {
      const one = runSandboxMany([record], ctx, verifactuSandboxFor(record));
      return asAeatDuplicate(one.kind === 'records' ? one.outcomes[0]! : one.outcome);
    }),
  };
}
