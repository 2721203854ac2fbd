/**
 * The commercial document as XML: a `DocCommercialiLotteria` 1.0 file (format DCL10,
 * DocCommercialiLotteriaTypes_v1.0.xsd, schemas/it/corrispettivi/) holding one
 * `DocumentoCommerciale`, sealed with an enveloped XAdES-BES signature whose extra signed
 * `ds:Object` carries the document's link in its register's chain.
 *
 * Why this schema: AdE publishes no XML for the "documento commerciale online" (a web
 * procedure, FORMATS.md §5) and the 2025 software-solution annex was not collected; the
 * lottery file is the only official schema for a single commercial document (date and
 * time, the `NNNN-NNNN` progressive, the amount, the payment split PC/PE/NR, and for a
 * reso or annullo the original's date, progressive and register). docs/decisions.md
 * "Italy: Documento Commerciale" gives the route and its limits.
 *
 * Written canonical (inclusive C14N 1.0, as ../../signing/xades-epes.ts requires): no
 * declaration, no self-closing tags, every namespace declared on the root. The schema
 * has no elementFormDefault, so only the root is qualified (prefix `dcl`).
 */
import { signableRootStartTag } from '../../signing/namespaces.ts';
import { el } from '../../xml/escape.ts';

export const NS_DCL = 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/doccommercialilotteria/v1.0';
/**
 * Our own vocabulary for the chain link inside the signature (a `ds:SignatureProperty`
 * takes elements of any other namespace, xmldsig-core-schema.xsd `SignaturePropertyType`).
 */
export const NS_CHAIN = 'urn:fiscalization-service:dc-chain:1';

/** DatiPagamento/Tipo: PC cash, PE electronic, NR not collected (meal vouchers, other). */
export type TipoPagamento = 'PC' | 'PE' | 'NR';

export interface ResoAnnullo {
  /** R: reso (return), A: annullo (cancellation). */
  tipologia: 'R' | 'A';
  /** The original document's date and time (xs:dateTime). */
  dataOra: string;
  /** The original's `NNNN-NNNN`. */
  progressivo: string;
  /** The original's register (MatrTrasm, 11 characters). */
  matricola: string;
}

export interface DcDocument {
  /** The test environment marks its files `simulazione="true"` (the schema's own flag). */
  simulazione: boolean;
  /** The merchant (DatiTrasmissione/Denominazione, Latin, at most 200). */
  denominazione: string;
  /** IdCliente: 1-16 letters and digits. */
  idCliente: string;
  dataOra: string;
  numeroProgressivo: string;
  /** Amount, 2 decimals. */
  ammontare: string;
  /** A sale's payments (1 to 3), or the reso/annullo it is. */
  body: { vendita: { tipo: TipoPagamento; importo: string }[] } | { resoAnnullo: ResoAnnullo };
}

/** The chain link the signature carries (see build.ts for the numbering it repeats). */
export interface DcChainLink {
  register: string;
  sequence: number;
  /** The previous document's fingerprint; absent for the first document of the register. */
  previous: string | null;
}

export function dcDocumentXml(d: DcDocument): string {
  const root = signableRootStartTag('dcl:DocCommercialiLotteria', { dcl: NS_DCL, fc: NS_CHAIN });
  // Attributes in C14N order: simulazione < versione.
  const open = root.slice(0, -1) + (d.simulazione ? ' simulazione="true"' : '') + ' versione="1.0">';
  const body =
    'vendita' in d.body
      ? '<Vendita>' +
        d.body.vendita.map((p) => `<DatiPagamento>${el('Tipo', p.tipo)}${el('Importo', p.importo)}</DatiPagamento>`).join('') +
        '</Vendita>'
      : '<ResoAnnullo>' +
        el('Tipologia', d.body.resoAnnullo.tipologia) +
        el('DataOra', d.body.resoAnnullo.dataOra) +
        el('Progressivo', d.body.resoAnnullo.progressivo) +
        `<Dispositivo>${el('MatrTrasm', d.body.resoAnnullo.matricola)}</Dispositivo>` +
        '</ResoAnnullo>';
  return (
    open +
    `<DatiTrasmissione>${el('Formato', 'DCL10')}${el('Denominazione', d.denominazione)}</DatiTrasmissione>` +
    '<DocumentoCommerciale>' +
    el('IdCliente', d.idCliente) +
    el('DataOra', d.dataOra) +
    el('NumeroProgressivo', d.numeroProgressivo) +
    el('Ammontare', d.ammontare) +
    body +
    '</DocumentoCommerciale>' +
    '</dcl:DocCommercialiLotteria>'
  );
}

/** The signed `ds:Object` content: the link as a signature property of the signature `signatureId`. */
export function chainPropertyXml(link: DcChainLink, signatureId: string): string {
  return (
    `<ds:SignatureProperties><ds:SignatureProperty Target="#${signatureId}"><fc:Link>` +
    el('fc:Register', link.register) +
    el('fc:Sequence', String(link.sequence)) +
    (link.previous === null ? '' : el('fc:Previous', link.previous)) +
    '</fc:Link></ds:SignatureProperty></ds:SignatureProperties>'
  );
}
