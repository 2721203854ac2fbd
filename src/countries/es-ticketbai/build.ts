/**
 * TicketBAI records: the `TicketBai` invoice (ticketbaiv1-2-2.xsd) or, for a
 * cancellation, `AnulaTicketBai` (anula_ticketbaiv1-2-2.xsd), signed XAdES-EPES
 * (enveloped) with the issuer's certificate under the territory's signature policy.
 *
 * The invoice's SignatureValue is its chain link: the TBAI identifier takes its first 13
 * characters, the next invoice's `EncadenamientoFacturaAnterior` its first 100
 * (FORMATS.md §1.1, §1.5). The annulment is signed alone, outside the chain.
 */
import type { BuildInput, FiscalRecord, LocationForFiscal, SigningKey } from '../types.ts';
import { dmyDate, localDate, localDateTimeWithOffset } from '../shared/dates.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { qrUrlHint, textHint } from '../shared/render-hints.ts';
import { signXadesEpes, type SignaturePolicy, type SignedXml } from '../../signing/xades-epes.ts';
import { TERRITORIES, type Territory } from './territory.ts';
import { qrBaseUrl, tbaiId, tbaiQrUrl } from './tbai.ts';
import { seriesOf } from './metadata.ts';
import { anulaTicketBaiXml, invoiceFields, issuerOf, softwareOf, ticketBaiXml } from './xml.ts';
import { exemptionLegend } from '../es/exemption.ts';
import { operationDateHints } from '../es/operation-date.ts';

/**
 * Signature policy per territory (FORMATS.md §1.4): identifier URL and SHA-256 of the
 * policy document.
 * - Gipuzkoa: as in the official 1.2.2 samples [verified].
 * - Araba: gobl.ticketbai and Barnetik/tbai-php-lib agree [secondary].
 * - Bizkaia: the v1.0 specification, whose identifier Orden Foral 1482/2020 Anexo III §1
 *   gives and whose hash was recomputed from the PDF [verified]; Barnetik now points at a
 *   v1.1 document whose hash is unverified here, so v1.0 stays until Batuz confirms v1.1.
 */
export const SIGNATURE_POLICIES: Readonly<Record<Territory, SignaturePolicy>> = {
  gipuzkoa: { identifier: 'https://www.gipuzkoa.eus/ticketbai/sinadura', sha256: 'vSe1CH7eAFVkGN0X2Y7Nl9XGUoBnziDA5BGUSsyt8mg=' },
  araba: { identifier: 'https://ticketbai.araba.eus/tbai/sinadura/', sha256: '4Vk3uExj7tGn9DyUCPDsV9HRmK6KZfYdRiW3StOjcQA=' },
  bizkaia: {
    identifier:
      'https://www.batuz.eus/fitxategiak/batuz/ticketbai/sinadura_elektronikoaren_zehaztapenak_especificaciones_de_la_firma_electronica_v1_0.pdf',
    sha256: 'Quzn98x3PMbSHwbUzaj5f5KOpiH0u8bvmwbbbNkO9Es=',
  },
};

export function territoryOf(location: LocationForFiscal): Territory {
  const t = location.config.territory;
  if (typeof t === 'string' && t in TERRITORIES) return t as Territory;
  throw new Error(`es-ticketbai: location ${location.id} has no valid territory in its config`);
}

export function buildTicketBai(input: BuildInput): FiscalRecord {
  signingKeyOf(input); // fail first and clearly: nothing is built unsigned
  return input.kind === 'cancellation' ? buildAnnulment(input) : buildInvoice(input);
}

function signingKeyOf(input: BuildInput): SigningKey {
  if (input.signingKey === undefined) {
    throw new Error('es-ticketbai: no signing key: TicketBAI records are signed with the issuer certificate (capabilities.signsWithCertificate)');
  }
  return input.signingKey;
}

/** Signature Ids derived from the transaction id, so a rebuild gives the same bytes. */
const idBaseOf = (transactionId: string): string => transactionId.replace(/[^A-Za-z0-9._-]/g, '-').slice(0, 100) || 'tbai';

function sign(document: string, input: BuildInput): SignedXml {
  return signXadesEpes({
    document,
    key: signingKeyOf(input),
    policy: SIGNATURE_POLICIES[territoryOf(input.location)],
    // Local time with its offset, as the official samples write SigningTime.
    signingTime: localDateTimeWithOffset(input.now, 'ES'),
    idBase: idBaseOf(input.transactionId),
  });
}

function buildInvoice(input: BuildInput): FiscalRecord {
  const { tx } = input;
  const territory = territoryOf(input.location);
  // Numbering is ours: the next number of the series, unless the client numbered it.
  const number = metaString(tx, 'invoice_number') ?? String(input.chain.number ?? input.chain.seq);
  const fields = invoiceFields(input, number);
  const signed = sign(ticketBaiXml(fields), input);
  // DDMMYY of FechaExpedicionFactura (DD-MM-YYYY).
  const d = fields.invoice.date;
  const id = tbaiId(fields.issuer.nif, `${d.slice(0, 2)}${d.slice(3, 5)}${d.slice(8, 10)}`, signed.signatureValue);
  // `i` is ImporteTotalFactura exactly as written in the XML (spec v1.1 §4.3.3).
  const qr = tbaiQrUrl(qrBaseUrl(territory, input.environment), { id, series: fields.invoice.series, number, total: fields.total });
  return {
    body: signed.xml,
    contentType: 'application/xml',
    fiscalId: id,
    documentNumber: number,
    fingerprint: signed.signatureValue,
    // What the next invoice's EncadenamientoFacturaAnterior repeats (FORMATS.md §1.5).
    linkData: { series: fields.invoice.series ?? '', number, date: fields.invoice.date },
    qrData: qr,
    placeholder: false,
    // Spec v1.1 §4.3.3: the identifier on one line, the QR below it, at the foot. An
    // exempt operation names its legal ground on the invoice (RD 1619/2012 art. 6.1.j).
    renderHints: [
      // The operation's own day, when it is not the issue date (../es/operation-date.ts).
      ...operationDateHints(fields.operationDate),
      ...(fields.exempt === null ? [] : [textHint('exemption', 'body', exemptionLegend(fields.exempt.cause, 'Norma Foral del IVA'))]),
      textHint('tbai_id', 'footer_bottom', id),
      qrUrlHint('qr', 'footer_bottom', qr),
    ],
  };
}

/** AnulaTicketBai: names the invoice it cancels by series, number and date; signed alone. */
function buildAnnulment(input: BuildInput): FiscalRecord {
  const original = input.original;
  if (original === undefined) throw new Error('es-ticketbai: a cancellation needs the original record');
  const number = original.documentNumber ?? metaString(original.tx, 'invoice_number');
  if (number === undefined || number === null || number === '') {
    throw new Error(`es-ticketbai: the cancelled record of transaction ${original.transactionId} has no document number`);
  }
  const document = anulaTicketBaiXml({
    issuer: issuerOf(input),
    invoice: { series: seriesOf(original.tx, input.location), number, date: dmyDate(localDate(new Date(original.issuedAt), 'ES')) },
    software: softwareOf(input),
  });
  return {
    body: sign(document, input).xml,
    contentType: 'application/xml',
    fiscalId: null,
    documentNumber: null,
    fingerprint: null,
    linkData: null,
    qrData: null,
    placeholder: false,
    renderHints: [],
  };
}
