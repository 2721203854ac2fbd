/**
 * VERI*FACTU record (placeholder). The real ones are `RegistroAlta` and, for a
 * cancellation, `RegistroAnulacion` (SuministroLR.xsd), chained by their huella
 * (FORMATS.md §2.1-2.4), and come with the Spain issue. Real already: the QR URL.
 * The fiscal id is the CSV that AEAT returns, so it is null here.
 */
import type { BuildInput, FiscalRecord } from '../types.ts';
import { decimal } from '../shared/amounts.ts';
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
  const number = metaString(tx, 'invoice_number') ?? String(input.chain.seq);
  const numSerie = numSerieOf(series, number);
  const fecha = dmyDate(localDate(input.now, 'ES'));
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
    invoice_type: metaString(tx, 'invoice_type') ?? 'F2',
    cuota_total: decimal(tx.tax_amount),
    importe_total: decimal(tx.total_amount),
    qr_url: qr,
  });
  return {
    body,
    contentType: 'application/json',
    fiscalId: null,
    documentNumber: numSerie,
    fingerprint: chainedFingerprint(previousFingerprint(input), body),
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
  const body = placeholderBody('VERI*FACTU RegistroAnulacion XML', placeholderNote('VERI*FACTU RegistroAnulacion', 'Spain'), {
    ...commonFields(input, { chained: true }),
    cancelled_invoice: {
      issuer_nif: issuerTaxId(input),
      num_serie_factura: original?.documentNumber ?? null,
      issue_date: original === undefined ? null : dmyDate(localDate(new Date(original.issuedAt), 'ES')),
    },
  });
  return {
    body,
    contentType: 'application/json',
    fiscalId: null,
    documentNumber: null,
    fingerprint: chainedFingerprint(previousFingerprint(input), body),
    qrData: null,
    placeholder: true,
    renderHints: [],
  };
}
