import type { ReceiptFacts } from '../types.ts';
import { SPANISH_NUMBER_LABEL, SPANISH_QR, spanishCorrection, spanishTaxSummary, spanishTitle, SPANISH_DUPLICATE, spanishIssuerName, spanishRecipientLines } from '../es/receipt.ts';
import { OPERATION_DATE_LABELS } from '../es/operation-date.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { destinatario, givenDescription } from './build.ts';
import { customerAddressOf } from '../es/customer-address.ts';
import { NAMES_CUSTOMER } from './metadata.ts';

/**
 * VERI*FACTU on the receipt (FORMATS.md §2.6): "QR tributario:" above the QR and the
 * "VERI*FACTU" legend near it: all three are render hints (`qr_label`, `qr`,
 * `verifactu_legend`), printed as they are, in their order.
 */
export const VERIFACTU_RECEIPT: ReceiptFacts = {
  language: 'es',
  title: spanishTitle,
  duplicate: SPANISH_DUPLICATE,
  // The operation's own day in the header, when the record states one (build.ts).
  labels: OPERATION_DATE_LABELS,
  // NumSerieFactura: series and number in one (build.ts).
  number: { label: SPANISH_NUMBER_LABEL, value: ({ documentNumber }) => documentNumber },
  qr: { qr: SPANISH_QR },
  // The annulled invoice is named by its NumSerieFactura, as RegistroAnulacion names it.
  correction: spanishCorrection((o) => o.documentNumber),
  // Recargo de equivalencia on lines of its own; IGIC or IPSI as the record's Impuesto says (xml.ts: 03, 02).
  taxSummary: spanishTaxSummary((record) => (record.includes('<sf:Impuesto>03</sf:Impuesto>') ? 'IGIC' : record.includes('<sf:Impuesto>02</sf:Impuesto>') ? 'IPSI' : undefined)),
  // The alta's NombreRazonEmisor as the record signed it.
  issuerLegalName: spanishIssuerName('RegistroAlta', 'NombreRazonEmisor'),
  // The Destinatarios of the types that name one (F1, F3, R1-R4), as build.ts writes them,
  // with the domicile customer_context gives (RD 1619/2012 art. 6.1.e: the record has no
  // field for it; read as TicketBAI writes it, ../es/customer-address.ts); and the
  // DescripcionOperacion the request gave (metadata.description).
  lines: spanishRecipientLines(({ tx }) => {
    if (!NAMES_CUSTOMER.has(metaString(tx, 'invoice_type') ?? 'F2')) return [];
    const party = destinatario(tx);
    if (party === undefined) return [];
    const address = customerAddressOf(tx.customer_context ?? {});
    return ['nif' in party.id
      ? { name: party.nombreRazon, nif: party.id.nif, address }
      : { name: party.nombreRazon, other: { country: party.id.idOtro.codigoPais, id: party.id.idOtro.id }, address }];
  }, ({ tx }) => givenDescription(tx)),
};
