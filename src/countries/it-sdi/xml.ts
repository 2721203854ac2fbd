/**
 * The FatturaPA 1.2.2 document (Schema_del_file_xml_FatturaPA_v1.2.2.xsd), written as a
 * string with the C14N-safe helpers of ../../xml/escape.ts: no XML declaration, no
 * whitespace between elements, elements in schema order. Only the root is in the
 * FatturaPA namespace (prefix `p`, as the official examples write it); the schema has no
 * elementFormDefault, so every child is unqualified. A document to be signed (FPA12,
 * build.ts) also declares `ds` and `xades` on its root, in canonical order, as the
 * enveloped signer requires (../../signing/namespaces.ts); an unsigned one (FPR12) does not.
 * The simplified invoice (Schema_VFSM10.xsd) is its own document: `semplificataXml` below.
 */
import { el, optEl } from '../../xml/escape.ts';
import { NS_DS, NS_XADES, namespaceDeclarations } from '../../signing/namespaces.ts';

export const NS_FATTURA = 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.2';

/** `<name>…</name>` around already-built children. */
const w = (name: string, inner: string): string => `<${name}>${inner}</${name}>`;

export interface IdFiscale {
  IdPaese: string;
  IdCodice: string;
}

/** AnagraficaType: Denominazione, or Nome and Cognome. */
export type Anagrafica = { Denominazione: string } | { Nome: string; Cognome: string };

/** IndirizzoType (Sede). */
export interface Sede {
  Indirizzo: string;
  CAP: string;
  Comune: string;
  Provincia?: string | undefined;
  Nazione: string;
}

export interface Linea {
  NumeroLinea: number;
  Descrizione: string;
  Quantita: string;
  PrezzoUnitario: string;
  PrezzoTotale: string;
  AliquotaIVA: string;
  Natura?: string | undefined;
}

export interface Riepilogo {
  AliquotaIVA: string;
  Natura?: string | undefined;
  ImponibileImporto: string;
  Imposta: string;
  /** I (immediate) here; D and S (split payment, PA) are not offered yet. */
  EsigibilitaIVA?: string | undefined;
}

export interface FatturaFields {
  versione: 'FPR12' | 'FPA12';
  /** The root also declares `ds` and `xades`: the document is about to be signed. */
  signable?: boolean | undefined;
  trasmissione: {
    IdTrasmittente: IdFiscale;
    ProgressivoInvio: string;
    CodiceDestinatario: string;
    PECDestinatario?: string | undefined;
  };
  cedente: {
    IdFiscaleIVA: IdFiscale;
    CodiceFiscale?: string | undefined;
    Anagrafica: Anagrafica;
    RegimeFiscale: string;
    Sede: Sede;
  };
  cessionario: {
    IdFiscaleIVA?: IdFiscale | undefined;
    CodiceFiscale?: string | undefined;
    Anagrafica: Anagrafica;
    Sede: Sede;
  };
  documento: {
    TipoDocumento: string;
    Divisa: string;
    Data: string;
    Numero: string;
    /** 2.1.1.6 DatiBollo: ImportoBollo when the stamp duty is paid virtually (bollo.ts). */
    ImportoBollo?: string | undefined;
    ImportoTotaleDocumento: string;
    /** 2.1.1.10: what the total differs from the summary's taxable amounts plus VAT (build.ts riepilogo). */
    Arrotondamento?: string | undefined;
  };
  /** DatiFattureCollegate of a credit note: the invoice it corrects. */
  collegata?: { IdDocumento: string; Data?: string | undefined } | undefined;
  linee: Linea[];
  riepilogo: Riepilogo[];
  pagamento?: { CondizioniPagamento: string; ModalitaPagamento: string; ImportoPagamento: string } | undefined;
}

const idFiscaleXml = (id: IdFiscale): string => el('IdPaese', id.IdPaese) + el('IdCodice', id.IdCodice);

/** Denominazione, or Nome and Cognome (FPR12 wraps them in Anagrafica; the simplified schema does not). */
const nomeXml = (a: Anagrafica): string => ('Denominazione' in a ? el('Denominazione', a.Denominazione) : el('Nome', a.Nome) + el('Cognome', a.Cognome));

const anagraficaXml = (a: Anagrafica): string => w('Anagrafica', nomeXml(a));

/** DatiTrasmissione, the same in both formats but for FormatoTrasmissione. */
const datiTrasmissioneXml = (t: FatturaFields['trasmissione'], formato: string): string =>
  w(
    'DatiTrasmissione',
    w('IdTrasmittente', idFiscaleXml(t.IdTrasmittente)) +
      el('ProgressivoInvio', t.ProgressivoInvio) +
      el('FormatoTrasmissione', formato) +
      el('CodiceDestinatario', t.CodiceDestinatario) +
      optEl('PECDestinatario', t.PECDestinatario),
  );

const sedeXml = (s: Sede): string =>
  w('Sede', el('Indirizzo', s.Indirizzo) + el('CAP', s.CAP) + el('Comune', s.Comune) + optEl('Provincia', s.Provincia) + el('Nazione', s.Nazione));

/** FatturaElettronicaType with one body, in schema order. */
export function fatturaXml(f: FatturaFields): string {
  const t = f.trasmissione;
  const header = w(
    'FatturaElettronicaHeader',
    datiTrasmissioneXml(t, f.versione) +
      w(
        'CedentePrestatore',
        w(
          'DatiAnagrafici',
          w('IdFiscaleIVA', idFiscaleXml(f.cedente.IdFiscaleIVA)) +
            optEl('CodiceFiscale', f.cedente.CodiceFiscale) +
            anagraficaXml(f.cedente.Anagrafica) +
            el('RegimeFiscale', f.cedente.RegimeFiscale),
        ) + sedeXml(f.cedente.Sede),
      ) +
      w(
        'CessionarioCommittente',
        w(
          'DatiAnagrafici',
          (f.cessionario.IdFiscaleIVA ? w('IdFiscaleIVA', idFiscaleXml(f.cessionario.IdFiscaleIVA)) : '') +
            optEl('CodiceFiscale', f.cessionario.CodiceFiscale) +
            anagraficaXml(f.cessionario.Anagrafica),
        ) + sedeXml(f.cessionario.Sede),
      ),
  );
  const d = f.documento;
  const generali = w(
    'DatiGenerali',
    w(
      'DatiGeneraliDocumento',
      el('TipoDocumento', d.TipoDocumento) +
        el('Divisa', d.Divisa) +
        el('Data', d.Data) +
        el('Numero', d.Numero) +
        (d.ImportoBollo !== undefined ? w('DatiBollo', el('BolloVirtuale', 'SI') + el('ImportoBollo', d.ImportoBollo)) : '') +
        el('ImportoTotaleDocumento', d.ImportoTotaleDocumento) +
        optEl('Arrotondamento', d.Arrotondamento),
    ) + (f.collegata ? w('DatiFattureCollegate', el('IdDocumento', f.collegata.IdDocumento) + optEl('Data', f.collegata.Data)) : ''),
  );
  const beni = w(
    'DatiBeniServizi',
    f.linee
      .map((l) =>
        w(
          'DettaglioLinee',
          el('NumeroLinea', String(l.NumeroLinea)) +
            el('Descrizione', l.Descrizione) +
            el('Quantita', l.Quantita) +
            el('PrezzoUnitario', l.PrezzoUnitario) +
            el('PrezzoTotale', l.PrezzoTotale) +
            el('AliquotaIVA', l.AliquotaIVA) +
            optEl('Natura', l.Natura),
        ),
      )
      .join('') +
      f.riepilogo
        .map((r) =>
          w(
            'DatiRiepilogo',
            el('AliquotaIVA', r.AliquotaIVA) +
              optEl('Natura', r.Natura) +
              el('ImponibileImporto', r.ImponibileImporto) +
              el('Imposta', r.Imposta) +
              optEl('EsigibilitaIVA', r.EsigibilitaIVA),
          ),
        )
        .join(''),
  );
  const p = f.pagamento;
  const pagamento = p
    ? w(
        'DatiPagamento',
        el('CondizioniPagamento', p.CondizioniPagamento) +
          w('DettaglioPagamento', el('ModalitaPagamento', p.ModalitaPagamento) + el('ImportoPagamento', p.ImportoPagamento)),
      )
    : '';
  return (
    `<p:FatturaElettronica${namespaceDeclarations(f.signable === true ? { p: NS_FATTURA, ds: NS_DS, xades: NS_XADES } : { p: NS_FATTURA })} versione="${f.versione}">` +
    header +
    w('FatturaElettronicaBody', generali + beni + pagamento) +
    '</p:FatturaElettronica>'
  );
}

/**
 * The simplified invoice (fattura semplificata, DPR 633/1972 art. 21-bis):
 * `FatturaElettronicaSemplificata` of Schema_VFSM10.xsd, FormatoTrasmissione FSM10, its own
 * namespace (`…/fatture/v1.0`). Not a variant of the 1.2.2 document: the seller's names sit
 * directly in CedentePrestatore (no DatiAnagrafici/Anagrafica), RegimeFiscale after the Sede;
 * the buyer is its fiscal identifiers (IdentificativiFiscali), its name and address optional
 * (AltriDatiIdentificativi); a note (TD08, TD09) names the document it corrects
 * (DatiFatturaRettificata); the body has no lines, summary or payment, but one
 * DatiBeniServizi per good or service with its amount VAT included (Importo) and the VAT in
 * it (DatiIVA: Imposta and Aliquota), and no document total. Same writing rules as
 * `fatturaXml`: root qualified (prefix `p`), children unqualified, schema order.
 */
export const NS_FATTURA_SEMPLIFICATA = 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/fatture/v1.0';

/** DatiBeniServiziType of the simplified invoice. */
export interface BeneServizio {
  Descrizione: string;
  /** The amount VAT included (Amount2DecimalType). */
  Importo: string;
  /** DatiIVA: the VAT in Importo and its rate. */
  Imposta: string;
  Aliquota: string;
  Natura?: string | undefined;
}

export interface SemplificataFields {
  trasmissione: FatturaFields['trasmissione'];
  cedente: FatturaFields['cedente'];
  cessionario: {
    IdFiscaleIVA?: IdFiscale | undefined;
    CodiceFiscale?: string | undefined;
    /** AltriDatiIdentificativi: the buyer's name and address, when known (not required by art. 21-bis). */
    altri?: { Anagrafica: Anagrafica; Sede: Sede } | undefined;
  };
  /** BolloVirtuale: `SI` when the stamp duty is paid virtually (bollo.ts); the format has no amount. */
  documento: { TipoDocumento: string; Divisa: string; Data: string; Numero: string; BolloVirtuale?: 'SI' | undefined };
  /** DatiFatturaRettificata of a simplified note (TD08, TD09): the document it corrects, and what it changes. */
  rettificata?: { NumeroFR: string; DataFR: string; ElementiRettificati: string } | undefined;
  beni: BeneServizio[];
}


/** FatturaElettronicaType of Schema_VFSM10.xsd (versione FSM10) with one body, in schema order. */
export function semplificataXml(f: SemplificataFields): string {
  const t = f.trasmissione;
  const c = f.cessionario;
  const header = w(
    'FatturaElettronicaHeader',
    datiTrasmissioneXml(t, 'FSM10') +
      w(
        'CedentePrestatore',
        w('IdFiscaleIVA', idFiscaleXml(f.cedente.IdFiscaleIVA)) +
          optEl('CodiceFiscale', f.cedente.CodiceFiscale) +
          nomeXml(f.cedente.Anagrafica) +
          sedeXml(f.cedente.Sede) +
          el('RegimeFiscale', f.cedente.RegimeFiscale),
      ) +
      w(
        'CessionarioCommittente',
        w('IdentificativiFiscali', (c.IdFiscaleIVA ? w('IdFiscaleIVA', idFiscaleXml(c.IdFiscaleIVA)) : '') + optEl('CodiceFiscale', c.CodiceFiscale)) +
          (c.altri ? w('AltriDatiIdentificativi', nomeXml(c.altri.Anagrafica) + sedeXml(c.altri.Sede)) : ''),
      ),
  );
  const d = f.documento;
  const generali = w(
    'DatiGenerali',
    w('DatiGeneraliDocumento', el('TipoDocumento', d.TipoDocumento) + el('Divisa', d.Divisa) + el('Data', d.Data) + el('Numero', d.Numero) + optEl('BolloVirtuale', d.BolloVirtuale)) +
      (f.rettificata
        ? w('DatiFatturaRettificata', el('NumeroFR', f.rettificata.NumeroFR) + el('DataFR', f.rettificata.DataFR) + el('ElementiRettificati', f.rettificata.ElementiRettificati))
        : ''),
  );
  const beni = f.beni
    .map((b) =>
      w(
        'DatiBeniServizi',
        el('Descrizione', b.Descrizione) +
          el('Importo', b.Importo) +
          w('DatiIVA', el('Imposta', b.Imposta) + el('Aliquota', b.Aliquota)) +
          optEl('Natura', b.Natura),
      ),
    )
    .join('');
  return (
    `<p:FatturaElettronicaSemplificata${namespaceDeclarations({ p: NS_FATTURA_SEMPLIFICATA })} versione="FSM10">` +
    header +
    w('FatturaElettronicaBody', generali + beni) +
    '</p:FatturaElettronicaSemplificata>'
  );
}
