/**
 * The files an inspector asks for (DECISIONS "Files an inspector asks for"):
 * `GET /v1/locations/{id}/closures` and `GET /v1/locations/{id}/jet`, paged JSON lists
 * (`{data, total, limit, offset}`, newest first as the spec's other lists) of the
 * register's signed closures and JET entries in the caller's environment. Each item is the
 * signed document as stored (every field the signature covers, so it verifies from the
 * item alone: verify.ts), with the stored record's `id` and `created_at`.
 *
 * Each read is journaled in the JET (code 60 `export`), after the page is read: the
 * page does not show its own export.
 */
import type { LocationFile, LocationFileDeps, LocationFileInput } from '../../types.ts';
import { nf525Repo } from '../../../store/repos/nf525-repo.ts';
import { closureChainKey } from './closure.ts';
import { jetChainKey } from './jet.ts';
import { jetWriter } from './processor.ts';

async function listOf(deps: LocationFileDeps, input: LocationFileInput, file: 'closures' | 'jet') {
  const { limit, offset } = input.page ?? { limit: 20, offset: 0 };
  const chainKey = file === 'closures' ? closureChainKey(input.location.id, input.environment) : jetChainKey(input.location.id, input.environment);
  const { rows, total } = await nf525Repo.page(deps.db, chainKey, limit, offset);
  const data = rows.map((r) => ({ id: r.id, created_at: r.created_at.toISOString(), ...(JSON.parse(r.body) as Record<string, unknown>) }));
  if (deps.ledger) {
    const key = await deps.signingKeys.recordKey(input.location, 'ec-p256');
    await jetWriter({ ledger: deps.ledger, software: deps.software }, { accountId: input.location.account_id, location: input.location, environment: input.environment, key })(
      'export', { file, limit: String(limit), offset: String(offset), count: String(data.length) },
    );
  }
  return { body: JSON.stringify({ data, total, limit, offset }) };
}

export const CLOSURES_FILE: LocationFile = {
  path: 'closures',
  param: { kind: 'page' },
  contentType: 'application/json; charset=utf-8',
  summary: "France NF525: the register's signed daily, monthly and annual closures (period, totals per VAT rate, perpetual grand total, signature), newest first",
  produce: (deps, input) => listOf(deps, input, 'closures'),
};

export const JET_FILE: LocationFile = {
  path: 'jet',
  param: { kind: 'page' },
  contentType: 'application/json; charset=utf-8',
  summary: "France NF525: the register's technical-event journal (JET), signed and chained, newest first",
  produce: (deps, input) => listOf(deps, input, 'jet'),
};
