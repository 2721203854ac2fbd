/**
 * TicketBAI record (placeholder). The real one is the TicketBAI 1.2 XML
 * (`ticketbaiv1-2-2.xsd`) signed XAdES-EPES, or `AnulaTicketBai` for a cancellation;
 * both come with the Spain issue. What is real already: the TBAI identifier shape with
 * its CRC-8, and the QR URL per territory and environment.
 */
import type { BuildInput, FiscalRecord, LocationForFiscal } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { sha256Base64 } from '../shared/canonical.ts';
import { dmyDate, localDate } from '../shared/dates.ts';
import {
  MISSING_TAX_ID,
  chainedFingerprint,
  commonFields,
  issuerTaxId,
  metaString,
  placeholderBody,
  placeholderNote,
  previousFingerprint,
} from '../shared/placeholder.ts';
import { qrUrlHint, textHint } from '../shared/render-hints.ts';
import { TERRITORIES, type Territory } from './territory.ts';
import { qrBaseUrl, tbaiId, tbaiQrUrl } from './tbai.ts';
import { seriesOf } from './metadata.ts';

const FORMAT = 'TicketBAI 1.2 XML (XAdES-EPES signed)';
const CANCEL_FORMAT = 'TicketBAI 1.2 AnulaTicketBai XML (XAdES-EPES signed)';

export function territoryOf(location: LocationForFiscal): Territory {
  const t = location.config.territory;
  if (typeof t === 'string' && t in TERRITORIES) return t as Territory;
  throw new Error(`es-ticketbai: location ${location.id} has no valid territory in its config`);
}

export function buildTicketBai(input: BuildInput): FiscalRecord {
  return input.kind === 'cancellation' ? buildAnnulment(input) : buildInvoice(input);
}

function buildInvoice(input: BuildInput): FiscalRecord {
  const { tx, location } = input;
  const territory = territoryOf(location);
  const series = seriesOf(tx, location);
  // Numbering is ours: the next number of the series, unless the client numbered it.
  const number = metaString(tx, 'invoice_number') ?? String(input.chain.number ?? input.chain.seq);
  const date = localDate(input.now, 'ES');
  const note = placeholderNote('TicketBAI invoice (XML signed with XAdES-EPES)', 'Spain');
  const fields = {
    ...commonFields(input, { chained: true }),
    territory,
    series,
    number,
    issue_date: dmyDate(date),
    invoice_type: metaString(tx, 'invoice_type') ?? 'F2',
  };
  // Stand-in for the XAdES SignatureValue (base64, like the real one): the TBAI id takes
  // its first 13 characters, and the next invoice's chaining block its first 100.
  const signatureValue = sha256Base64(placeholderBody(FORMAT, note, fields));
  const id = tbaiId(issuerTaxId(input) ?? MISSING_TAX_ID, `${date.day}${date.month}${date.year.slice(2)}`, signatureValue);
  const qr = tbaiQrUrl(qrBaseUrl(territory, input.environment), { id, series, number, total: decimal(tx.total_amount) });
  const body = placeholderBody(FORMAT, note, { ...fields, placeholder_signature_value: signatureValue, tbai_id: id, qr_url: qr });
  return {
    body,
    contentType: 'application/json',
    fiscalId: id,
    documentNumber: number,
    fingerprint: chainedFingerprint(previousFingerprint(input), body),
    qrData: qr,
    placeholder: true,
    // Spec v1.1 §4.3.3: the identifier on one line, the QR below it, at the foot.
    renderHints: [textHint('tbai_id', 'footer_bottom', id), qrUrlHint('qr', 'footer_bottom', qr)],
  };
}

/** AnulaTicketBai: names the invoice it cancels; signed alone, outside the chain. */
function buildAnnulment(input: BuildInput): FiscalRecord {
  const original = input.original;
  const origTx = original?.tx ?? input.tx;
  const body = placeholderBody(CANCEL_FORMAT, placeholderNote('TicketBAI AnulaTicketBai (signed XML)', 'Spain'), {
    ...commonFields(input, { chained: false }),
    territory: territoryOf(input.location),
    cancelled_invoice: {
      issuer_nif: issuerTaxId(input),
      series: seriesOf(origTx, input.location),
      number: original?.documentNumber ?? null,
      issue_date: original === undefined ? null : dmyDate(localDate(new Date(original.issuedAt), 'ES')),
      tbai_id: original?.fiscalId ?? null,
    },
  });
  return {
    body,
    contentType: 'application/json',
    fiscalId: null,
    documentNumber: null,
    fingerprint: null,
    qrData: null,
    placeholder: true,
    renderHints: [],
  };
}
