/**
 * VERI*FACTU record (placeholder document). The real ones are `RegistroAlta` and, for a
 * cancellation, `RegistroAnulacion` (SuministroLR.xsd), and come with the Spain issue.
 * Real already: the QR URL and the chain, by the official huella (FORMATS.md §2.1-2.4).
 * The fiscal id is the CSV that AEAT returns, so it is null here.
 */
import type { BuildInput, FiscalRecord } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
import { dmyDate, localDate, localDateTimeWithOffset } from '../shared/dates.ts';
import { huellaAlta, huellaAnulacion } from './huella.ts';
import {
  MISSING_TAX_ID,
  commonFields,
  issuerTaxId,
  metaString,
  placeholderBody,
  placeholderNote,
  previousFingerprint,
} from '../shared/placeholder.ts';
import { qrUrlHint, textHint } from '../shared/render-hints.ts';
import { seriesOf } from './metadata.ts';
import { verifactuQrUrl } from './qr.ts';

/** `NumSerieFactura` is one field: our series and number joined by `-` (`A-42`). */
export const numSerieOf = (series: string, number: string): string => `${series}-${number}`;

export function buildVerifactu(input: BuildInput): FiscalRecord {
  return input.kind === 'cancellation' ? buildAnulacion(input) : buildAlta(input);
}

function buildAlta(input: BuildInput): FiscalRecord {
  const { tx } = input;
  const series = seriesOf(tx);
  const number = metaString(tx, 'invoice_number') ?? String(input.chain.number ?? input.chain.seq);
  const numSerie = numSerieOf(series, number);
  const fecha = dmyDate(localDate(input.now, 'ES'));
  const nif = issuerTaxId(input) ?? MISSING_TAX_ID;
  const invoiceType = metaString(tx, 'invoice_type') ?? 'F2';
  const generatedAt = localDateTimeWithOffset(input.now, 'ES');
  const previous = previousFingerprint(input);
  // The real huella (FORMATS.md §2.1), over the values the XML will carry.
  const huella = huellaAlta({
    IDEmisorFactura: nif, NumSerieFactura: numSerie, FechaExpedicionFactura: fecha, TipoFactura: invoiceType,
    CuotaTotal: decimal(tx.tax_amount), ImporteTotal: decimal(tx.total_amount), Huella: previous ?? '', FechaHoraHusoGenRegistro: generatedAt,
  });
  const qr = verifactuQrUrl(input.environment, {
    nif: issuerTaxId(input) ?? MISSING_TAX_ID,
    numSerie,
    fecha,
    importe: decimal(tx.total_amount),
  });
  const body = placeholderBody('VERI*FACTU RegistroAlta XML', placeholderNote('VERI*FACTU RegistroAlta', 'Spain'), {
    ...commonFields(input, { chained: true }),
    num_serie_factura: numSerie,
    series,
    number,
    issue_date: fecha,
    invoice_type: invoiceType,
    cuota_total: decimal(tx.tax_amount),
    importe_total: decimal(tx.total_amount),
    fecha_hora_huso_gen_registro: generatedAt,
    huella_anterior: previous,
    huella,
    qr_url: qr,
  });
  return {
    body,
    contentType: 'application/json',
    fiscalId: null,
    documentNumber: numSerie,
    fingerprint: huella,
    qrData: qr,
    placeholder: true,
    // Print rules (AEAT QR specification, as implementations cite it): "QR tributario:"
    // above the code, and the "VERI*FACTU" legend next to it.
    renderHints: [
      textHint('qr_label', 'footer_bottom', 'QR tributario:'),
      qrUrlHint('qr', 'footer_bottom', qr),
      textHint('verifactu_legend', 'footer_bottom', 'VERI*FACTU'),
    ],
  };
}

/** RegistroAnulacion: names the cancelled invoice and is chained like an alta (FORMATS §2.4). */
function buildAnulacion(input: BuildInput): FiscalRecord {
  const original = input.original;
  const cancelled = {
    issuer_nif: issuerTaxId(input),
    num_serie_factura: original?.documentNumber ?? null,
    issue_date: original === undefined ? null : dmyDate(localDate(new Date(original.issuedAt), 'ES')),
  };
  const generatedAt = localDateTimeWithOffset(input.now, 'ES');
  const previous = previousFingerprint(input);
  // The real huella of a RegistroAnulacion (FORMATS.md §2.2).
  const huella = huellaAnulacion({
    IDEmisorFacturaAnulada: cancelled.issuer_nif ?? MISSING_TAX_ID, NumSerieFacturaAnulada: cancelled.num_serie_factura ?? '',
    FechaExpedicionFacturaAnulada: cancelled.issue_date ?? '', Huella: previous ?? '', FechaHoraHusoGenRegistro: generatedAt,
  });
  const body = placeholderBody('VERI*FACTU RegistroAnulacion XML', placeholderNote('VERI*FACTU RegistroAnulacion', 'Spain'), {
    ...commonFields(input, { chained: true }),
    cancelled_invoice: cancelled,
    fecha_hora_huso_gen_registro: generatedAt,
    huella_anterior: previous,
    huella,
  });
  return {
    body,
    contentType: 'application/json',
    fiscalId: null,
    documentNumber: null,
    fingerprint: huella,
    qrData: null,
    placeholder: true,
    renderHints: [],
  };
}
