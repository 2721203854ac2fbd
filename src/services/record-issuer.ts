/**
 * The issuer a record was issued under, kept beside it (`fiscal_records.issuer`): the
 * location's name, address and legal name as the document was issued, not as the location
 * stands when it is printed again (receipts' merchant block) or sent again (a holder named
 * in the message: `StoredRecord.issuer`, filled by the submit worker).
 *
 * Why: the issuer's name and address are part of the document (RD 1619/2012 art. 6.1.c and
 * 6.1.e; CIVA art. 36.º n.º 5 a)), and a duplicate reproduces the document as issued (RD
 * 1619/2012 art. 14; BOI-TVA-DECLA-30-10-30): a PATCH of the location after the sale must
 * not change a reprint. Why beside the record (fiscal_records.issuer, migration 0059) and not
 * in it: most records are an authority's document whose schema has no place for them (see
 * each plug-in's receipt.ts for what its record carries of the issuer),
 * signed or sent byte for byte as built. A plug-in that reads the issuer from its record
 * (`ReceiptFacts.issuerLegalName`, `issuerLocation`) still wins over this.
 */
import { keptIssuer, type RecordIssuer } from '../store/repos/fiscal-records-repo.ts';

// Reading what a record kept (`keptIssuer`, `issuerAsIssued`) lives beside the column, in
// store/repos/fiscal-records-repo.ts: the batch claim and the submit workers read it there.

/** The location's legal name as receipts print it: `country_config.legal_name` when a non-empty string, else null. */
export function legalNameOf(config: Readonly<Record<string, unknown>>): string | null {
  const v = config.legal_name;
  return typeof v === 'string' && v !== '' ? v : null;
}

/** What a record keeps of its issuer: the location it was built at, as it stood then. */
export function issuerOf(location: { name: string; address: string | null; config: Readonly<Record<string, unknown>> }): RecordIssuer {
  return { name: location.name, address: location.address ?? null, legal_name: legalNameOf(location.config) };
}

/**
 * The issuer a receipt prints: the one its record kept, else (a record stored before it was
 * kept, or a kept value not of that shape) the location's current one.
 */
export function printedIssuer(kept: unknown, current: RecordIssuer): RecordIssuer {
  return keptIssuer(kept) ?? current;
}
