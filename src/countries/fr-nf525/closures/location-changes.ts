/**
 * `onLocationChanged` (countries/types.ts) for France: a change of a register's parameters
 * (its `country_config`, its status) or its deletion is journaled in the register's JET
 * (jet.ts codes 20 `parameters` and 30 `register_deleted`). The référentiel NF525 and
 * BOI-TVA-DECLA-30-10-30 have the JET trace the events that affect the system, parameter
 * changes among them; before, a PATCH changed the register's legal name or deactivated it
 * and nothing of it was signed anywhere.
 *
 * The entry and the change commit together: the change is written by the JET entry's own
 * `afterWrite`, in the ledger's database transaction (the same path every JET event takes:
 * `jetEntry` appended through the ledger). A change is never committed without its entry,
 * nor an entry journaled for a change that did not commit.
 *
 * Which JETs: a register has one per environment, and its parameters are those of both.
 * The live JET is the legal one: it is written with the change whenever live is involved
 * (the request was made with a live key, or the register's live JET has begun); else the
 * request's environment's. The other environment's JET, if the request's or begun, gets
 * the same entry right after the commit; only a test JET can be that one, and a failure
 * there is logged (the test environment carries no legal weight).
 *
 * What is journaled: the names of the fields that changed and their values before and after
 * (France's `legal_name` and `register_id` are public: the SIRENE register publishes them;
 * the location's `name` and `address`, printed at the head of every ticket, are the shop's);
 * a secret field (none in France today) would be named only, never valued.
 */
import type { LocationChange, LocationChangeDeps, LocationConfigChange } from '../../types.ts';
import type { Queryable } from '../../../store/db.ts';
import { nf525Repo } from '../../../store/repos/nf525-repo.ts';
import { jetChainKey, jetEntry, type JetEvent } from './jet.ts';
import { registerIdOf } from './processor.ts';

type Environment = 'test' | 'live';

/** A detail's text: strings as they are, anything else as JSON. */
const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

/** The details of a `parameters` event: `fields`, and each field's `.before` / `.after`. */
export function parameterDetails(
  config: readonly LocationConfigChange[], status?: { before: string; after: string }, fields: readonly LocationConfigChange[] = [],
): Record<string, string> {
  const details: Record<string, string> = {};
  const names: string[] = [];
  // The location's printed fields (`name`, `address`: the ticket's header) by their own name,
  // then its config's under `country_config.`.
  for (const c of [...fields.map((f) => ({ ...f, name: f.field })), ...config.map((f) => ({ ...f, name: `country_config.${f.field}` }))]) {
    const name = c.name;
    names.push(name);
    if (c.secret) continue; // named, never valued
    if (c.before !== undefined) details[`${name}.before`] = text(c.before);
    if (c.after !== undefined) details[`${name}.after`] = text(c.after);
  }
  if (status) {
    names.push('status');
    details['status.before'] = status.before;
    details['status.after'] = status.after;
  }
  details.fields = names.join(',');
  return details;
}

/** The JET event a change is journaled as, with its details. */
export function jetEventOf(change: LocationChange): { event: JetEvent; details: Record<string, string> } {
  if (change.kind === 'deleted') return { event: 'register_deleted', details: { status: change.status } };
  return { event: 'parameters', details: parameterDetails(change.config, change.status, change.fields) };
}

/** The JETs a change goes to, the one written with the change first (see above). */
export async function environmentsOf(db: Queryable, locationId: string, requested: Environment): Promise<Environment[]> {
  const begun = async (env: Environment) => ((await nf525Repo.head(db, jetChainKey(locationId, env)))?.seq ?? 0) > 0;
  const live = requested === 'live' || (await begun('live'));
  const test = requested === 'test' || (await begun('test'));
  return [...(live ? ['live' as const] : []), ...(test ? ['test' as const] : [])];
}

export async function journalLocationChange(deps: LocationChangeDeps, change: LocationChange, commit: (q: Queryable) => Promise<void>): Promise<void> {
  const { location } = change;
  const [first, ...others] = await environmentsOf(deps.db, location.id, change.environment);
  const key = await deps.signingKeys.recordKey(location, 'ec-p256');
  const { event, details } = jetEventOf(change);
  const entry = (environment: Environment, afterWrite?: (tx: Queryable) => Promise<void>) => jetEntry({
    accountId: location.account_id, locationId: location.id, registerId: registerIdOf(location), environment,
    event, details, key, software: { name: deps.software.name, version: deps.software.version },
    afterWrite: afterWrite ? (tx: Queryable) => afterWrite(tx) : undefined,
  });
  await deps.ledger.append(entry(first!, commit));
  for (const environment of others) {
    try {
      await deps.ledger.append(entry(environment));
    } catch (err) {
      deps.log.error({ err, locationId: location.id, environment, event }, 'nf525: a location change is committed and journaled, but not in this environment\'s JET');
    }
  }
}
