/**
 * AdE's answers about commercial documents as XML: the `EsitoOperazione` of a send
 * (CorrispettiviMessaggiTypes_v1.0.xsd) and the `DocCommercialiLotteriaEsito` of a
 * result (DocCommercialiLotteriaEsitoTypes_v1.0.xsd). The sandbox stub (sandbox.ts) and
 * the tests' fake AdE write them, so that stub answers go through the very parser real
 * answers do (response.ts). Both schemas require a `ds:Signature`: AdE signs its answers;
 * the writer takes the signature element from the caller (the fake signs with its own
 * key, the stub puts a placeholder, as the SDI stub does).
 */
import { escapeText } from '../../xml/escape.ts';
import type { AdeError } from './response.ts';

export const NS_CORRISPETTIVI_MESSAGGI = 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/corrispettivi/v1.0';
export const NS_LOTTERIA_ESITO = 'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/doccommercialilotteria/esito/v1.0';

/** A structurally valid, cryptographically meaningless signature (stub answers are not signed). */
export const PLACEHOLDER_SIGNATURE =
  '<ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#"><ds:SignedInfo>' +
  '<ds:CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>' +
  '<ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>' +
  '<ds:Reference URI=""><ds:Transforms><ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/></ds:Transforms>' +
  '<ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/><ds:DigestValue>c2FuZGJveA==</ds:DigestValue></ds:Reference>' +
  '</ds:SignedInfo><ds:SignatureValue>c2FuZGJveA==</ds:SignatureValue></ds:Signature>';

const el = (name: string, value: string) => `<${name}>${escapeText(value)}</${name}>`;
const errori = (wrapper: string, errors: readonly AdeError[]) =>
  `<${wrapper}>${errors.map((e) => `<Errore>${el('Codice', e.codice)}${el('Descrizione', e.descrizione)}</Errore>`).join('')}</${wrapper}>`;

export function esitoOperazioneXml(a: { idOperazione: string; errors?: readonly AdeError[]; signature?: string }): string {
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<msg:EsitoOperazione xmlns:msg="${NS_CORRISPETTIVI_MESSAGGI}" versione="1.0">` +
    el('IdOperazione', a.idOperazione) +
    (a.errors?.length ? errori('Errori', a.errors) : '') +
    (a.signature ?? PLACEHOLDER_SIGNATURE) +
    '</msg:EsitoOperazione>'
  );
}

export function esitoDocumentoXml(a: {
  idOperazione: string;
  at: string;
  esito: 'AC' | 'SE' | 'SC';
  documents: number;
  errors?: readonly AdeError[];
  /** SE: remarks on the document `numeroProgressivo` (sent at `dataOra`). */
  remarks?: { numeroProgressivo: string; dataOra: string; errors: readonly AdeError[] };
  signature?: string;
}): string {
  const r = a.remarks;
  return (
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<esito:DocCommercialiLotteriaEsito xmlns:esito="${NS_LOTTERIA_ESITO}" versione="1.0">` +
    el('IdOperazione', a.idOperazione) +
    el('DataOra', a.at) +
    el('NumElementi', String(a.documents)) +
    el('Esito', a.esito) +
    (a.esito === 'SC' && a.errors?.length ? errori('ListaErrori', a.errors) : '') +
    (a.esito === 'SE' && r
      ? '<SegnalazioniDocComm><Segnalazione>' + el('Posizione', '1') + el('NumeroProgressivo', r.numeroProgressivo) +
        el('DataOra', r.dataOra) + errori('Errori', r.errors) + '</Segnalazione></SegnalazioniDocComm>'
      : '') +
    (a.signature ?? PLACEHOLDER_SIGNATURE) +
    '</esito:DocCommercialiLotteriaEsito>'
  );
}
