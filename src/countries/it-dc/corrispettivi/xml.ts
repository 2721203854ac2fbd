/**
 * The DatiCorrispettivi document (CorrispettiviTypes_v1.0.xsd, Formato COR10), unsigned,
 * in canonical form (../../../xml/escape.ts: no declaration, no self-closing tags, no
 * whitespace) so the enveloped signer (build.ts) digests the bytes written here.
 *
 * The schema has no elementFormDefault: only the root is in the namespace, every child is
 * unqualified, so the root is prefixed (`c:`) and no default namespace is declared. The
 * root declares `ds` and `xades` too, as the signer requires (../../../signing/namespaces.ts).
 *
 * - `simulazione="true"` (the schema's fixed value) marks a test-environment file.
 * - `Trasmissione/Dispositivo`: Tipo `MC` with the register's matricola as IdDispositivo.
 *   Our registers are emission points behind one processing point, which is what the
 *   schema's multi-cash type (MC, "Multi cassa") describes, and the merchant's seal
 *   certificate does not name the register (an RT's device certificate would), so the
 *   file must (docs/decisions.md "Italy: daily corrispettivi").
 * - `DataOraRilevazione`: the close of the day, 23:59:59 Rome time: the file is built
 *   after midnight, and the time must name the day the takings belong to.
 */
import { NS_DS, NS_XADES, namespaceDeclarations } from '../../../signing/namespaces.ts';
import { el } from '../../../xml/escape.ts';
import { amount2, rate2, type DayTotals, type Riepilogo } from './totals.ts';

export const NS_CORRISPETTIVI = 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/corrispettivi/dati/v1.0';
export const FORMATO = 'COR10';
/** Integer15Type. */
const MAX_PROGRESSIVO = 999_999_999_999_999;

export interface CorrispettiviDocument {
  totals: DayTotals;
  /** The register: `pem_matricola`. */
  matricola: string;
  /** Trasmissione/Progressivo: this register's transmission number, from 1. */
  progressivo: number;
  /** `DataOraRilevazione`, an xsd:dateTime with its offset. */
  rilevazione: string;
  /** A test-environment file carries `simulazione="true"`. */
  simulazione: boolean;
}

const optAmount = (name: string, cents: number): string => (cents === 0 ? '' : el(name, amount2(cents)));

function riepilogo(r: Riepilogo): string {
  const head = r.natura !== undefined
    ? el('Natura', r.natura)
    : `<IVA>${el('AliquotaIVA', rate2(r.rateBp!))}${el('Imposta', amount2(r.imposta))}</IVA>`;
  return (
    '<Riepilogo>' +
    head +
    el('Ammontare', amount2(r.ammontare)) +
    optAmount('TotaleAmmontareResi', r.resi) +
    optAmount('TotaleAmmontareAnnulli', r.annulli) +
    '</Riepilogo>'
  );
}

function totali(t: DayTotals): string {
  return (
    '<Totali>' +
    el('NumeroDocCommerciali', String(t.documents)) +
    el('PagatoContanti', amount2(t.cash)) +
    el('PagatoElettronico', amount2(t.electronic)) +
    (t.ticketAmount > 0 ? `<Ticket>${el('PagatoTicket', amount2(t.ticketAmount))}${el('NumeroTicket', String(t.ticketCount))}</Ticket>` : '') +
    '</Totali>'
  );
}

/** The unsigned canonical document, its root declaring `c`, `ds` and `xades`. */
export function corrispettiviXml(d: CorrispettiviDocument): string {
  if (!Number.isSafeInteger(d.progressivo) || d.progressivo < 1 || d.progressivo > MAX_PROGRESSIVO) {
    throw new Error(`corrispettivi: Progressivo ${d.progressivo} is outside 1-${MAX_PROGRESSIVO}`);
  }
  if (d.totals.riepiloghi.length === 0) throw new Error('corrispettivi: a day without documents has no DatiRT to send');
  if (d.matricola.length === 0 || d.matricola.length > 100) throw new Error('corrispettivi: IdDispositivo must be 1-100 characters');
  // Canonical attribute order: namespace declarations (by prefix), then attributes by name.
  const attrs = `${d.simulazione ? ' simulazione="true"' : ''} versione="${FORMATO}"`;
  return (
    `<c:DatiCorrispettivi${namespaceDeclarations({ c: NS_CORRISPETTIVI, ds: NS_DS, xades: NS_XADES })}${attrs}>` +
    '<Trasmissione>' +
    el('Progressivo', String(d.progressivo)) +
    el('Formato', FORMATO) +
    `<Dispositivo>${el('Tipo', 'MC')}${el('IdDispositivo', d.matricola)}</Dispositivo>` +
    '</Trasmissione>' +
    el('DataOraRilevazione', d.rilevazione) +
    `<DatiRT>${d.totals.riepiloghi.map(riepilogo).join('')}${totali(d.totals)}</DatiRT>` +
    '</c:DatiCorrispettivi>'
  );
}
