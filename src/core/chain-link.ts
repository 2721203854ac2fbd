/**
 * A record's place in its chain, as the ledger hands it to whatever builds the record
 * (src/ledger): its sequence number, its document number when numbered apart from the
 * chain, and what the previous record left for it. Pure data, no I/O.
 */
export interface ChainLink {
  /** 1 for the first record of a chain. */
  seq: number;
  /**
   * The document number within its series, for systems whose numbering is not the chain
   * sequence (`numberingKey`); for the others it equals `seq`. Altas only.
   */
  number?: number | undefined;
  previous: PreviousLink | null;
}

/** What the previous record of the chain left for its successor. */
export interface PreviousLink {
  fingerprint: string | null;
  fiscalId: string | null;
  issuedAt: string;
  /** What the previous record left for its successor (`FiscalRecord.linkData`), e.g. TicketBAI series, number, date. */
  linkData?: Record<string, string> | null | undefined;
}

/**
 * A link whose previous record's fingerprint is not known yet (its signature is being
 * made): what `FiscalSystem.prepare` builds on. Everything else of the link is there.
 */
export interface PendingLink extends Omit<ChainLink, 'previous'> {
  previous: Omit<PreviousLink, 'fingerprint'> | null;
}
