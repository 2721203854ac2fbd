/**
 * The JET (journal des événements techniques) of an NF525 register: an append-only log of
 * technical events, each a signed record chained to the previous one, per location and
 * environment (`jetChainKey`), written through the ledger as entries of kind `journal`.
 * Signed like the records and closures (ES256, the location's record key).
 *
 * Event codes (ours: the référentiel's own list is not public; a change of an existing
 * code's meaning is a new message tag, a new code is not: the entries before it keep theirs):
 *   `01` software_start    the first record a process (an API node) signed for the
 *                          register since it started; details: `name`, `version`
 *   `02` software_stop     the process that journaled `01` for the register stops cleanly
 *                          (SIGINT/SIGTERM, the local host's or the engine's close); details:
 *                          `name`, `version`. A process that dies journals none, so a `01`
 *                          with no `02` before it (since the previous `01`) marks an unclean
 *                          stop
 *   `10` software_version  the first event of this software version on the register (the
 *                          first closure run after an install or an update); details:
 *                          `name`, `version`, `previous_version`
 *   `20` parameters        the register's parameters changed (PATCH /v1/locations/{id}: its
 *                          `country_config` or its status, activated or deactivated; the
 *                          référentiel's "modification de paramètres", BOI-TVA-DECLA-30-10-30);
 *                          journaled in the database transaction of the change
 *                          (location-changes.ts); details: `fields` (what changed, comma
 *                          separated: `country_config.<field>`, `status`) and for each
 *                          `<name>.before`, `<name>.after` (absent: not set). A
 *                          `register_id` change (allowed until the register has records) is
 *                          signed as the new register: the verifier takes the chain's register
 *                          to change only at such an event
 *   `30` register_deleted  the location (register) was deleted (DELETE /v1/locations/{id});
 *                          its records, closures and JET stay; details: `status` (when deleted)
 *   `40` closure           a closure was produced; details: `kind`, `period`, `number`,
 *                          `signature` (journaled after the closure, in closure order;
 *                          one missed by a process that died is journaled by the next run:
 *                          the JET head's linkData keeps the last closure journaled)
 *   `50` archive           an archive of a closed period was produced (archive.ts): details
 *                          `archive_id`, `kind`, `period`, `closure` (number), `closure_seq`,
 *                          `created_at`, the seq ranges it holds (`records_first_seq`,
 *                          `records_last_seq`, `closures_first_seq`, `closures_last_seq`,
 *                          `jet_first_seq`, `jet_last_seq`), `manifest_sha256` and the
 *                          manifest's `signature` (the JET head's linkData keeps the last
 *                          closure archived: `archive_closure_seq`)
 *   `60` export            a file was read by an inspector; details: `file`, `limit`,
 *                          `offset`, `count`
 *   `70` duplicate         a numbered duplicate of a ticket was printed (a reprint,
 *                          POST /v1/transactions/{id}/receipt/duplicate); details:
 *                          `transaction_id`, `ticket` (the ticket's number), `copy`
 *   `80` late_record       a record closed after its own day: stamped on a Paris day
 *                          that was closed without it (a node whose clock lagged, or two
 *                          nodes either side of midnight), so the daily closure of a later
 *                          day covers it (docs/decisions.md "France: a record stamped on a
 *                          closed day"); details: `record_number`, `record_seq`,
 *                          `transaction_id`, `record_timestamp` (its own, signed),
 *                          `closed_period` (its day), `closure_period` and `closure` (the
 *                          daily closure that covers it). Journaled before that closure's
 *                          `40`, once per record (the JET head's linkData keeps the last
 *                          record marked: `late_seq`)
 *   `90` closure_error     a closure run failed for the register; details: `message`
 *
 * The signed message (`jetMessage`), one line of UTF-8, 11 fields joined by `|`:
 *    1 `NF525J1`   format tag (JET, version 1)
 *    2 register_id
 *    3 environment `test` / `live`
 *    4 seq         the event's place in the JET, from 1
 *    5 number      `<register_id>-J<seq, 8 digits>`
 *    6 code        the event code (above)
 *    7 event       the event's name (above)
 *    8 timestamp   Paris wall time with offset, to the second
 *    9 details     lowercase hex SHA-256 of the details' text: one line per detail, keys
 *                  in ascending (code unit) order, joined by `\n`, each
 *                  `<key>=<base64url of the UTF-8 value, no padding>`; empty text when none
 *   10 key_id
 *   11 previous    the previous event's signature value; empty for the first
 */
import type { ChainLink } from '../../../core/chain-link.ts';
import { newId } from '../../../core/ids.ts';
import type { RecordKey } from '../../../core/record-key.ts';
import type { LedgerEntry } from '../../../ledger/types.ts';
import { localDateTimeWithOffset } from '../../shared/dates.ts';
import { SIGNATURE_ALGORITHM, signMessage } from '../record.ts';
import { NF525_SYSTEM, sha256Hex } from './closure.ts';

export const JET_FORMAT = 'nf525.jet';
export const JET_VERSION = 1;
export const JET_TAG = 'NF525J1';

export const JET_EVENTS = {
  software_start: '01',
  software_stop: '02',
  software_version: '10',
  parameters: '20',
  register_deleted: '30',
  closure: '40',
  archive: '50',
  export: '60',
  duplicate: '70',
  late_record: '80',
  closure_error: '90',
} as const;
export type JetEvent = keyof typeof JET_EVENTS;
/** How a `parameters` event names the register id's change (`<name>.before`, `<name>.after`). */
export const REGISTER_FIELD = 'country_config.register_id';

export const jetChainKey = (locationId: string, environment: 'test' | 'live'): string => `fr-nf525:${locationId}:jet:${environment}`;
export const jetNumber = (registerId: string, seq: number): string => `${registerId}-J${String(seq).padStart(8, '0')}`;

export interface Nf525JetEntry {
  format: typeof JET_FORMAT;
  version: typeof JET_VERSION;
  register_id: string;
  environment: 'test' | 'live';
  seq: number;
  number: string;
  code: string;
  event: JetEvent;
  timestamp: string;
  details: Record<string, string>;
  software: { name: string; version: string };
  signature: { algorithm: typeof SIGNATURE_ALGORITHM; key_id: string; previous: string | null; value: string };
}

/** The text whose SHA-256 is message field 9. */
export const detailsText = (details: Readonly<Record<string, string>>): string =>
  Object.keys(details).sort().map((k) => `${k}=${Buffer.from(details[k]!, 'utf8').toString('base64url')}`).join('\n');

export function jetMessage(e: Pick<Nf525JetEntry, 'register_id' | 'environment' | 'seq' | 'number' | 'code' | 'event' | 'timestamp' | 'details'> & { signature: Pick<Nf525JetEntry['signature'], 'key_id' | 'previous'> }): string {
  const fields: (string | number)[] = [
    JET_TAG, e.register_id, e.environment, e.seq, e.number, e.code, e.event, e.timestamp, sha256Hex(detailsText(e.details)),
    e.signature.key_id, e.signature.previous ?? '',
  ];
  for (const f of fields) if (String(f).includes('|')) throw new Error(`nf525: a signed JET field contains "|": ${String(f)}`);
  return fields.join('|');
}

export interface JetInput {
  accountId: string;
  locationId: string;
  registerId: string;
  environment: 'test' | 'live';
  event: JetEvent;
  details: Record<string, string>;
  key: RecordKey;
  software: { name: string; version: string };
  /**
   * Refuses the entry on the JET head's linkData (throw): `software_version` is written
   * once per version (the head carries the last version journaled).
   */
  onlyIf?: ((linkData: Readonly<Record<string, string>> | null) => void) | undefined;
  /** A `closure` event: the closure's seq in its chain (the JET head remembers the last journaled). */
  closureSeq?: number | undefined;
  /** An `archive` event: the seq of the closure archived (the JET head remembers the last). */
  archiveClosureSeq?: number | undefined;
  /** A `late_record` event: the record's seq in its chain (the JET head remembers the last marked). */
  lateSeq?: number | undefined;
  /** Writes that commit with the entry, in its database transaction (a location change it journals). */
  afterWrite?: LedgerEntry['afterWrite'];
}

export function buildJet(input: JetInput, link: ChainLink, now: Date): { entry: Nf525JetEntry; linkData: Record<string, string> } {
  const previousLink = link.previous?.linkData ?? null;
  input.onlyIf?.(previousLink);
  const unsigned = {
    register_id: input.registerId,
    environment: input.environment,
    seq: link.seq,
    number: jetNumber(input.registerId, link.seq),
    code: JET_EVENTS[input.event],
    event: input.event,
    timestamp: localDateTimeWithOffset(now, 'FR'),
    details: Object.fromEntries(Object.keys(input.details).sort().map((k) => [k, input.details[k]!])),
  };
  const previous = link.previous?.fingerprint ?? null;
  const value = signMessage(jetMessage({ ...unsigned, signature: { key_id: input.key.keyId, previous } }), input.key.signer);
  const entry: Nf525JetEntry = {
    format: JET_FORMAT, version: JET_VERSION, ...unsigned, software: input.software,
    signature: { algorithm: SIGNATURE_ALGORITHM, key_id: input.key.keyId, previous, value },
  };
  // The head remembers the last software version journaled, the last closure, the last
  // closure archived and the last late record marked.
  const version = input.event === 'software_version' ? input.software.version : (previousLink?.software_version ?? '');
  const closureSeq = input.event === 'closure' && input.closureSeq !== undefined ? String(input.closureSeq) : (previousLink?.closure_seq ?? '0');
  const archiveSeq = input.event === 'archive' && input.archiveClosureSeq !== undefined ? String(input.archiveClosureSeq) : previousLink?.archive_closure_seq;
  const lateSeq = input.event === 'late_record' && input.lateSeq !== undefined ? String(input.lateSeq) : previousLink?.late_seq;
  return {
    entry,
    linkData: {
      software_version: version, closure_seq: closureSeq,
      ...(archiveSeq !== undefined ? { archive_closure_seq: archiveSeq } : {}), ...(lateSeq !== undefined ? { late_seq: lateSeq } : {}),
    },
  };
}

export function jetEntry(input: JetInput): LedgerEntry {
  return {
    chainKey: jetChainKey(input.locationId, input.environment),
    // Journaled once (`onlyIf`): decided on the committed JET head, never on a predicted one.
    refusesOnHead: input.onlyIf !== undefined,
    ...(input.afterWrite ? { afterWrite: input.afterWrite } : {}),
    build(link, now) {
      const { entry, linkData } = buildJet(input, link, now);
      return {
        record: {
          id: newId(), transaction_id: null, account_id: input.accountId, system: NF525_SYSTEM, kind: 'journal',
          fingerprint: entry.signature.value, fiscal_id: entry.number, document_number: entry.number, qr_data: null,
          content_type: 'application/json', body: `${JSON.stringify(entry, null, 2)}\n`, placeholder: false,
        },
        linkData,
      };
    },
  };
}

/** Refuses a second `software_version` event for the same version. */
export class JetSkipped extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JetSkipped';
  }
}
