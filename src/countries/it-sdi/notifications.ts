/**
 * The SdI notifications channel (`POST /v1/inbound/sdi`, DECISIONS "Italy SDI inbound
 * receiver"): the messages SdI sends the transmitter of an invoice file, per
 * MessaggiTypes 1.1 (shared/schemas/it/fatturapa/sdi/MessaggiTypes_v1.1.xsd; FORMATS
 * §4.4), read into what the core needs (services/inbound.ts): which record (the
 * IdentificativoSdI SdI gave the file, or the file name, NomeFile, which is the
 * transaction's fiscal id), the status it moves to, and what SdI said.
 *
 * | Root | Code | Status | Why |
 * |---|---|---|---|
 * | RicevutaConsegna | RC | `delivered` | spec "Transaction statuses" |
 * | NotificaScarto | NS | `rejected` | every ListaErrori/Errore kept; only 00002/00404 on a resent file: none (isDuplicateNotice) |
 * | NotificaMancataConsegna | MC | `delivery_error` | the invoice is still valid |
 * | AttestazioneTrasmissioneFattura | AT | `delivery_error` | SdI attests the file was transmitted but could not be delivered (PA): the state MC announces; after an MC it changes nothing |
 * | NotificaEsito | NE | none | the PA's EC01 acceptance / EC02 refusal: a commercial answer on an invoice already delivered (fiscally issued); recorded, with `esito` |
 * | NotificaDecorrenzaTermini | DT | none | the PA did not answer within 15 days: recorded |
 *
 * Recipient-side messages (MetadatiInvioFile, NotificaEsitoCommittente,
 * ScartoEsitoCommittente) are not sent to a transmitter: refused like any other root.
 *
 * Checked in code (the receiver is pure: no xmllint here): well-formed XML without a
 * DOCTYPE, a known root in the messages namespace, and the elements the XSD requires of
 * that root. A posted message's `ds:Signature` is verified (checkSdiSignature below). The
 * fixtures beside this file are valid against the XSD (notifications.test.ts, xmllint).
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { badRequest, ValidationError } from '../../core/errors.ts';
import { envelopedSignatures, parseXml, SignatureError, verifyEnvelopedSignature } from '../../signing/xmldsig-verify.ts';
import type { InboundChannel, InboundMessage, InboundRead, TransactionStatus } from '../types.ts';
import { SDI_CODES } from './codes.ts';

/**
 * The messages' namespace: the one of the XSD we hold (fatturapa.gov.it), and the Agenzia
 * delle Entrate's (ivaservizi, where the FatturaPA namespace moved), read as the same types
 * in case SdI writes it (unverified: no real message at hand).
 */
export const MESSAGGI_NAMESPACES: readonly string[] = [
  'http://www.fatturapa.gov.it/sdi/messaggi/v1.0',
  'http://ivaservizi.agenziaentrate.gov.it/docs/xsd/messaggi/v1.0',
];

export const SDI_STATUS_EVENT = 'transaction.sdi_status_changed';

interface Kind {
  code: 'RC' | 'NS' | 'MC' | 'NE' | 'DT' | 'AT';
  status: TransactionStatus | undefined;
  /** The data elements the XSD requires, in its order (ds:Signature aside). */
  required: readonly string[];
  /** Optional data elements kept in the response when present. */
  optional: readonly string[];
}

const KINDS: Readonly<Record<string, Kind>> = {
  RicevutaConsegna: {
    code: 'RC', status: 'delivered',
    required: ['IdentificativoSdI', 'NomeFile', 'DataOraRicezione', 'DataOraConsegna', 'Destinatario', 'MessageId'],
    optional: ['PecMessageId', 'Note'],
  },
  NotificaScarto: {
    code: 'NS', status: 'rejected',
    required: ['IdentificativoSdI', 'NomeFile', 'DataOraRicezione', 'ListaErrori', 'MessageId'],
    optional: ['PecMessageId', 'Note'],
  },
  NotificaMancataConsegna: {
    code: 'MC', status: 'delivery_error',
    required: ['IdentificativoSdI', 'NomeFile', 'DataOraRicezione', 'MessageId'],
    optional: ['Descrizione', 'PecMessageId', 'Note'],
  },
  NotificaEsito: {
    code: 'NE', status: undefined,
    required: ['IdentificativoSdI', 'NomeFile', 'EsitoCommittente', 'MessageId'],
    optional: ['PecMessageId', 'Note'],
  },
  NotificaDecorrenzaTermini: {
    code: 'DT', status: undefined,
    required: ['IdentificativoSdI', 'NomeFile', 'MessageId'],
    optional: ['Descrizione', 'PecMessageId', 'Note'],
  },
  AttestazioneTrasmissioneFattura: {
    code: 'AT', status: 'delivery_error',
    required: ['IdentificativoSdI', 'NomeFile', 'DataOraRicezione', 'Destinatario', 'MessageId', 'HashFileOriginale'],
    optional: ['PecMessageId', 'Note'],
  },
};

const RECIPIENT_ROOTS = new Set(['MetadatiInvioFile', 'NotificaEsitoCommittente', 'ScartoEsitoCommittente']);
const KNOWN = 'RicevutaConsegna (RC), NotificaScarto (NS), NotificaMancataConsegna (MC), NotificaEsito (NE), ' +
  'NotificaDecorrenzaTermini (DT) or AttestazioneTrasmissioneFattura (AT)';

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: false,
  // Ids and codes stay text: "00404" must not become 404.
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  processEntities: true,
  htmlEntities: false,
});

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

/** The children of an element by local name (elements of MessaggiTypes are unqualified). */
function children(el: Obj, name: string): unknown[] {
  const out: unknown[] = [];
  for (const [k, v] of Object.entries(el)) {
    if (k.startsWith('@_') || k === '#text' || localName(k) !== name) continue;
    if (Array.isArray(v)) out.push(...v);
    else out.push(v);
  }
  return out;
}

/** The text of a child, or undefined when absent or empty. */
function childText(el: Obj, name: string): string | undefined {
  const v = children(el, name)[0];
  if (typeof v === 'string') return v === '' ? undefined : v;
  if (isObj(v) && typeof v['#text'] === 'string' && v['#text'] !== '') return v['#text'];
  return undefined;
}

function requireText(el: Obj, name: string, where: string): string {
  const v = childText(el, name);
  if (v === undefined) throw badRequest(`${where} is missing its ${name}`);
  return v;
}

function requireElement(el: Obj, name: string, where: string): Obj {
  const v = children(el, name)[0];
  if (!isObj(v)) throw badRequest(`${where} is missing its ${name}`);
  return v;
}

/** What SdI said, element by element (ListaErrori / Destinatario / EsitoCommittente read apart). */
export interface SdiNotification {
  /** RC, NS, MC, NE, DT or AT. */
  notification: Kind['code'];
  /** The root element's name. */
  type: string;
  IdentificativoSdI: string;
  NomeFile: string;
  MessageId: string;
  DataOraRicezione?: string;
  DataOraConsegna?: string;
  Destinatario?: { Codice: string; Descrizione: string };
  /** NS: every error, with our English text of its code when we know it. */
  ListaErrori?: { Codice: string; Descrizione: string; Suggerimento?: string; message?: string }[];
  /** NE: the PA's answer, EC01 accepted or EC02 refused. */
  esito?: 'EC01' | 'EC02';
  EsitoCommittente?: Record<string, unknown>;
  HashFileOriginale?: string;
  Descrizione?: string;
  PecMessageId?: string;
  Note?: string;
}

/** Parses a notification document; throws a ValidationError (400) when it is not one this channel reads. */
export function parseSdiNotification(body: string): SdiNotification {
  const xml = body.replace(/^\uFEFF/, '');
  if (xml.trim() === '') throw badRequest('the SDI notification is empty');
  if (/<!DOCTYPE/i.test(xml)) throw badRequest('an SDI notification must not carry a DOCTYPE');
  if (XMLValidator.validate(xml) !== true) throw badRequest('the SDI notification is not well-formed XML');
  let doc: Obj;
  try {
    doc = parser.parse(xml) as Obj;
  } catch (e) {
    // Well-formed but beyond what the parser takes (its limit: 100 nested elements; an SDI
    // notification has fewer than ten): the sender's fault, a 400, never a 500.
    throw badRequest(`the SDI notification cannot be read: ${e instanceof Error ? e.message : String(e)}`);
  }
  const roots = Object.keys(doc).filter((k) => !k.startsWith('?'));
  if (roots.length !== 1) throw badRequest(`not an SDI notification: expected ${KNOWN}`);
  const rootName = roots[0]!;
  const value = doc[rootName];
  const root: Obj = isObj(value) ? value : {};
  const name = localName(rootName);
  const prefix = rootName.includes(':') ? rootName.slice(0, rootName.indexOf(':')) : undefined;
  const ns = root[prefix ? `@_xmlns:${prefix}` : '@_xmlns'];
  const kind = KINDS[name];
  if (!kind || typeof ns !== 'string' || !MESSAGGI_NAMESPACES.includes(ns)) {
    if (RECIPIENT_ROOTS.has(name)) throw badRequest(`${name} is a message for invoice recipients; this channel reads ${KNOWN}`);
    throw badRequest(`not an SDI notification (root element ${name}${typeof ns === 'string' ? ` in ${ns}` : ' without the messages namespace'}): expected ${KNOWN}`);
  }
  const where = `${name} (${kind.code})`;
  for (const el of kind.required) {
    if (children(root, el).length === 0) throw badRequest(`${where} is missing its ${el}`);
  }
  const id = requireText(root, 'IdentificativoSdI', where);
  if (!/^\d{1,12}$/.test(id)) throw badRequest(`${where}: IdentificativoSdI must be an integer of up to 12 digits`);
  const out: SdiNotification = {
    notification: kind.code,
    type: name,
    IdentificativoSdI: id,
    NomeFile: requireText(root, 'NomeFile', where),
    MessageId: requireText(root, 'MessageId', where),
  };
  for (const el of ['DataOraRicezione', 'DataOraConsegna', 'HashFileOriginale', 'Descrizione', 'PecMessageId', 'Note'] as const) {
    const v = kind.required.includes(el) ? requireText(root, el, where) : kind.optional.includes(el) ? childText(root, el) : undefined;
    if (v !== undefined) out[el] = v;
  }
  if (kind.required.includes('Destinatario')) {
    const d = requireElement(root, 'Destinatario', where);
    out.Destinatario = { Codice: requireText(d, 'Codice', `${where} Destinatario`), Descrizione: requireText(d, 'Descrizione', `${where} Destinatario`) };
  }
  if (kind.code === 'NS') {
    const lista = requireElement(root, 'ListaErrori', where);
    const errori = children(lista, 'Errore');
    if (errori.length === 0) throw badRequest(`${where}: ListaErrori has no Errore`);
    out.ListaErrori = errori.map((e, i) => {
      if (!isObj(e)) throw badRequest(`${where}: Errore ${i + 1} is missing its Codice`);
      const Codice = requireText(e, 'Codice', `${where}: Errore ${i + 1}`);
      const Descrizione = requireText(e, 'Descrizione', `${where}: Errore ${i + 1}`);
      const Suggerimento = childText(e, 'Suggerimento');
      const message = SDI_CODES[Codice]?.message;
      return { Codice, Descrizione, ...(Suggerimento !== undefined ? { Suggerimento } : {}), ...(message !== undefined ? { message } : {}) };
    });
  }
  if (kind.code === 'NE') {
    const ec = requireElement(root, 'EsitoCommittente', where);
    requireText(ec, 'IdentificativoSdI', `${where} EsitoCommittente`);
    const esito = requireText(ec, 'Esito', `${where} EsitoCommittente`);
    if (esito !== 'EC01' && esito !== 'EC02') throw badRequest(`${where}: EsitoCommittente/Esito must be EC01 or EC02, not ${esito}`);
    out.esito = esito;
    const rif = children(ec, 'RiferimentoFattura')[0];
    out.EsitoCommittente = {
      Esito: esito,
      ...(isObj(rif) ? { RiferimentoFattura: { NumeroFattura: childText(rif, 'NumeroFattura'), AnnoFattura: childText(rif, 'AnnoFattura') } } : {}),
      ...(childText(ec, 'Descrizione') !== undefined ? { Descrizione: childText(ec, 'Descrizione') } : {}),
      ...(childText(ec, 'MessageIdCommittente') !== undefined ? { MessageIdCommittente: childText(ec, 'MessageIdCommittente') } : {}),
    };
  }
  return out;
}

/** What the signature check found, kept with the notification. */
export interface SdiSignatureCheck {
  /** The signing certificate's subject. */
  signer: string;
  /** Whether it was checked against the configured trust anchors (SDI_NOTIFICATION_CA_FILE). */
  trusted: boolean;
}

/**
 * SdI signs every notification (XAdES-BES enveloped; the XSD requires `ds:Signature`). A
 * posted notification that carries a signature must verify: its references (the whole
 * message among them) and its value, with the certificate it carries; with
 * `SDI_NOTIFICATION_CA_FILE` set, that certificate must also chain to one of the
 * configured CAs, and an unsigned notification is refused. Without the setting, an
 * unsigned notification is accepted (an edge that unwraps the SdICoop envelope may not
 * keep it; the shared secret still authenticates the sender). Every failure is a 400
 * naming it (docs/decisions.md "Italy", "Signed notifications").
 */
export function checkSdiSignature(body: string, opts: { trustedCa?: string | undefined; now: Date }): SdiSignatureCheck | undefined {
  let signed: boolean;
  try {
    const doc = parseXml(body);
    signed = envelopedSignatures(doc).length > 0;
    if (!signed) {
      if (opts.trustedCa !== undefined) throw badRequest('the SDI notification is not signed: only signed notifications are accepted (SDI_NOTIFICATION_CA_FILE is set)');
      return undefined;
    }
    const v = verifyEnvelopedSignature(doc, { now: opts.now, trustedCa: opts.trustedCa });
    return { signer: v.certificate.subject.split('\n').join(', '), trusted: v.trusted };
  } catch (e) {
    if (e instanceof SignatureError) throw badRequest(`the SDI notification signature does not verify: ${e.message}`);
    if (e instanceof ValidationError) throw e;
    // Anything else the verifier trips on (a certificate node cannot load, a key type it
    // cannot use) is still the message's fault, never a 500.
    throw badRequest(`the SDI notification signature cannot be verified: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** SdI's "it already has this": the file name (00002) or the invoice (00404: seller, year, number). */
export const DUPLICATE_CODES: ReadonlySet<string> = new Set(['00002', '00404']);

/**
 * An NS whose every error is 00002 (duplicate file name) or 00404 (duplicate invoice: SdI
 * already holds an invoice of this seller with this number in this year, not rejected).
 * What it means depends on how we sent the file (docs/decisions.md "NS 00404"):
 * - sent once, its answer stored (`pending`, `awaiting_notification`, not a resend): the
 *   copy SdI holds is not this transaction's (a reused invoice number, a file name used
 *   twice): a rejection like any NS;
 * - otherwise: sent on a retry (`response_payload.authority.resend`, sdicoop.ts), or how
 *   we sent it is unknown (the attempt's answer not stored yet, or lost: `processing`,
 *   `failed`, `failed_permanent`), or the transaction is settled already (the held copy's
 *   own RC, MC or NS came first, and the retry that was in flight when it came got the
 *   duplicate): an earlier attempt may have been taken with its answer lost, so SdI holds
 *   our own copy, whose notification decides. The duplicate notice is recorded
 *   (`duplicate: true`) and moves nothing.
 */
export const isDuplicateNotice = (n: SdiNotification): boolean =>
  n.notification === 'NS' && (n.ListaErrori ?? []).length > 0 && n.ListaErrori!.every((e) => DUPLICATE_CODES.has(e.Codice));

const resent = (payload: Record<string, unknown>): boolean => {
  const authority = payload.authority;
  return typeof authority === 'object' && authority !== null && (authority as Record<string, unknown>).resend === true;
};

/**
 * What an NS says went wrong, as the core records a refusal (`submit_error`, translated
 * into `error_message`): the first error's code and our text of it (SdI's Descrizione for
 * a code we do not know), naming the other codes when there are more.
 */
export function scartoFailure(n: SdiNotification): { code: string; message: string } | undefined {
  const [first, ...more] = n.ListaErrori ?? [];
  if (!first) return undefined;
  const text = first.message ?? first.Descrizione;
  return {
    code: first.Codice,
    message: more.length === 0 ? text : `${text} (and ${more.length} more: ${more.map((e) => e.Codice).join(', ')})`,
  };
}

/** The it-sdi plug-in's inbound channel. */
export const sdiNotifications: InboundChannel = {
  name: 'sdi',
  secretHeader: 'X-SDI-Secret',
  read({ body, origin, trustedCa, now }: InboundRead): InboundMessage {
    const n = parseSdiNotification(body);
    // The stub's own notifications (origin internal) carry a placeholder signature.
    const signature = origin === 'internal' ? undefined : checkSdiSignature(body.replace(/^\uFEFF/, ''), { trustedCa, now: now ?? new Date() });
    const kind = KINDS[n.type]!;
    const response = { ...n, ...(signature ? { signature } : {}) };
    if (isDuplicateNotice(n)) {
      // Maybe not the held copy's id: matched by it when known, else by the file name, also
      // once the held copy's notification has moved the transaction on (`history`).
      return {
        match: { upstreamId: n.IdentificativoSdI, fiscalId: n.NomeFile, history: 'IdentificativoSdI' },
        status: 'rejected',
        event: SDI_STATUS_EVENT,
        response: { ...response, duplicate: true },
        // Only a file sent once, its answer stored, is rejected by it (isDuplicateNotice).
        resolve: (found) => (found.status === 'pending' && found.response_payload.awaiting_notification === true && !resent(found.response_payload)
          ? { status: 'rejected', event: SDI_STATUS_EVENT, failure: scartoFailure(n) }
          : {}),
      };
    }
    return {
      match: { upstreamId: n.IdentificativoSdI, fiscalId: n.NomeFile },
      upstreamId: n.IdentificativoSdI,
      status: kind.status,
      response,
      event: kind.status !== undefined ? SDI_STATUS_EVENT : undefined,
      failure: kind.code === 'NS' ? scartoFailure(n) : undefined,
    };
  },
};
