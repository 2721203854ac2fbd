/**
 * FatturaPA record (placeholder). The real one is the FatturaPA 1.2.2 XML (FPR12 or
 * FPA12), sent to SdI, and comes with the Italy issue. SDI has no annulment: cancelling
 * issues a credit note (TD04) for the whole invoice (DECISIONS "Cancelling").
 */
import type { BuildInput, FiscalRecord } from '../types.ts';
import { isoDate, localDate } from '../shared/dates.ts';
import { commonFields, placeholderBody, placeholderNote } from '../shared/placeholder.ts';
import { configString } from '../shared/config-fields.ts';
import { metaString } from '../shared/metadata-fields.ts';
import { textHint } from '../shared/render-hints.ts';

const FORMAT = 'FatturaPA 1.2.2 XML';

/**
 * The credit note's number. Italian invoices are numbered by the merchant, and a credit
 * note needs a number of its own; until the Italy issue gives credit notes their own
 * numbering, it is the original's number in a separate `NC-` sequence (one credit note
 * per cancelled invoice, so it is unique).
 */
export const creditNoteNumber = (originalNumber: string): string => `NC-${originalNumber}`;

export function buildSdi(input: BuildInput): FiscalRecord {
  const { tx, location } = input;
  const cancellation = input.kind === 'cancellation';
  const origTx = input.original?.tx ?? tx;
  const originalNumber = metaString(origTx, 'invoice_number') ?? '';
  const number = cancellation ? creditNoteNumber(originalNumber) : (metaString(tx, 'invoice_number') ?? '');
  const fields = {
    ...commonFields(input, { chained: false }),
    formato_trasmissione: configString(location.config, 'formato_trasmissione') ?? null,
    regime_fiscale: configString(location.config, 'regime_fiscale') ?? null,
    codice_fiscale: configString(location.config, 'codice_fiscale') ?? null,
    tipo_documento: cancellation ? 'TD04' : (metaString(tx, 'tipo_documento') ?? 'TD01'),
    numero: number,
    data: cancellation ? isoDate(localDate(input.now, 'IT')) : (metaString(tx, 'invoice_date') ?? isoDate(localDate(input.now, 'IT'))),
    codice_destinatario: metaString(origTx, 'codice_destinatario') ?? null,
    buyer_denomination: metaString(origTx, 'buyer_denomination') ?? null,
    buyer_country: metaString(origTx, 'buyer_country') ?? null,
    // A credit note names the invoice it corrects (DatiFattureCollegate).
    fattura_collegata: cancellation
      ? { numero: originalNumber, data: metaString(origTx, 'invoice_date') ?? null }
      : undefined,
  };
  const body = placeholderBody(
    cancellation ? `${FORMAT} (TD04 credit note)` : FORMAT,
    placeholderNote(cancellation ? 'FatturaPA credit note (TD04)' : 'FatturaPA invoice', 'Italy'),
    fields,
  );
  return {
    body,
    contentType: 'application/json',
    // SdI assigns the IdentificativoSdI when it receives the file.
    fiscalId: null,
    documentNumber: number,
    fingerprint: null,
    qrData: null,
    placeholder: true,
    renderHints: [textHint('invoice_number', 'header', number)],
  };
}
