/**
 * Stub SdI. A real SdI takes the file (`sent`: the transaction stays `pending`, with the
 * IdentificativoSdI SdI gives every file, a number; 10 digits here) and answers later by
 * notification. The stub does the same: it answers `sent` and produces the notification a
 * real SdI would send, as a MessaggiTypes 1.1 document (valid against the XSD;
 * sandbox.test.ts), which the core delivers through the SdI channel
 * (notifications.ts, services/inbound.ts `receiveTrusted`): the same code a posted
 * notification goes through (DECISIONS "Test keys: notifications through the receiver").
 *
 * - accept (default) → a RicevutaConsegna (RC): `delivered`;
 * - reject:<code> → a NotificaScarto (NS) listing that code, with its Descrizione (our text
 *   of the code, codes.ts): `rejected`;
 * - reject:00404 → what a duplicate means for us: a retry resent a file SdI had already
 *   taken (the first answer lost). SdI sends an NS 00404 for the copy we know (the
 *   IdentificativoSdI of our answer) and an RC for the copy it holds (another
 *   IdentificativoSdI): the NS is a duplicate notice (recorded, no status change;
 *   notifications.ts), the RC delivers;
 * - timeout, error:<code> → as every stub answers them (shared/sandbox.ts): a transport
 *   fault or a retriable failure, nothing sent.
 *
 * The signature is a placeholder: the stub does not sign, and the channel verifies posted
 * notifications only (these arrive with origin `internal`).
 */
import { escapeText } from '../../xml/escape.ts';
import { derivedDigits, outcomeOf, runSandbox, type SandboxSpec } from '../shared/sandbox.ts';
import { TransportError, type AuthorityOutcome, type StoredRecord, type SubmitContext } from '../types.ts';
import { SDI_CODES } from './codes.ts';
import { MESSAGGI_NAMESPACES } from './notifications.ts';

/** The IdentificativoSdI the stub gives a record's file (stable per transaction). */
export const stubIdentificativoSdI = (transactionId: string): string => derivedDigits(transactionId, 'sdi-identificativo', 10);
/** reject:00404: the IdentificativoSdI of the copy SdI already held (the first send, its answer lost). */
export const stubHeldCopyIdentificativoSdI = (transactionId: string): string => derivedDigits(transactionId, 'sdi-identificativo-held', 10);

export const sdiSandbox: SandboxSpec = {
  system: 'it-sdi',
  authority: 'SdI',
  codes: SDI_CODES,
  rejectedStatus: 'rejected',
  accept: (record) => {
    const id = stubIdentificativoSdI(record.transactionId);
    return { fiscalId: id, status: 'delivered', response: { notification: 'RC', IdentificativoSdI: id } };
  },
};

const SIGNATURE = `  <ds:Signature xmlns:ds="http://www.w3.org/2000/09/xmldsig#">
    <ds:SignedInfo>
      <ds:CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>
      <ds:SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/>
      <ds:Reference URI="">
        <ds:Transforms>
          <ds:Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>
        </ds:Transforms>
        <ds:DigestMethod Algorithm="http://www.w3.org/2001/04/xmlenc#sha256"/>
        <ds:DigestValue>c2FuZGJveDogbm90IGEgcmVhbCBkaWdlc3Q=</ds:DigestValue>
      </ds:Reference>
    </ds:SignedInfo>
    <ds:SignatureValue>c2FuZGJveDogbm90IGEgcmVhbCBzaWduYXR1cmU=</ds:SignatureValue>
  </ds:Signature>`;

const el = (name: string, value: string, indent = '  ') => `${indent}<${name}>${escapeText(value)}</${name}>`;
const doc = (root: string, lines: string[]) => [
  '<?xml version="1.0" encoding="UTF-8"?>',
  `<types:${root} xmlns:types="${MESSAGGI_NAMESPACES[0]}" versione="1.0">`,
  ...lines,
  SIGNATURE,
  `</types:${root}>`,
  '',
].join('\n');

export interface StubNotificationInput {
  identificativoSdI: string;
  /** The invoice file's name (the record's fiscal id). */
  fileName: string;
  /** When SdI received (and, for an RC, delivered) the file. */
  at: Date;
  messageId: string;
}

/** A RicevutaConsegna (RC) for the file, delivered to `codiceDestinatario`. */
export function stubRicevutaConsegna(n: StubNotificationInput & { codiceDestinatario: string }): string {
  return doc('RicevutaConsegna', [
    el('IdentificativoSdI', n.identificativoSdI),
    el('NomeFile', n.fileName),
    el('DataOraRicezione', n.at.toISOString()),
    el('DataOraConsegna', n.at.toISOString()),
    '  <Destinatario>',
    el('Codice', n.codiceDestinatario, '    '),
    el('Descrizione', 'Destinatario di prova (sandbox)', '    '),
    '  </Destinatario>',
    el('MessageId', n.messageId),
  ]);
}

/** A NotificaScarto (NS) for the file listing `code` with its description. */
export function stubNotificaScarto(n: StubNotificationInput & { code: string }): string {
  const descrizione = (SDI_CODES[n.code]?.message ?? `SdI refused the file with code ${n.code}`).slice(0, 255);
  return doc('NotificaScarto', [
    el('IdentificativoSdI', n.identificativoSdI),
    el('NomeFile', n.fileName),
    el('DataOraRicezione', n.at.toISOString()),
    '  <ListaErrori>',
    '    <Errore>',
    el('Codice', n.code, '      '),
    el('Descrizione', descrizione, '      '),
    '    </Errore>',
    '  </ListaErrori>',
    el('MessageId', n.messageId),
  ]);
}

/** The codice destinatario of the invoice (metadata, `0000000` by default): where the RC says it went. */
function destinatarioOf(record: StoredRecord): string {
  const c = record.tx.metadata.codice_destinatario;
  return typeof c === 'string' && /^[A-Z0-9]{6,7}$/.test(c) ? c : '0000000';
}

/** `submit` of it-sdi: the stub in `stub` mode (the SdI protocol client is not written yet). */
export async function sdiSubmit(record: StoredRecord, ctx: SubmitContext): Promise<AuthorityOutcome> {
  if (ctx.mode !== 'stub') throw new TransportError('not_stub', 'it-sdi: the sandbox answers stub mode only (authority mode: sdicoop.ts)');
  const outcome = outcomeOf(record);
  if (outcome.kind === 'timeout' || outcome.kind === 'error') return runSandbox(record, ctx, sdiSandbox);
  const identificativoSdI = stubIdentificativoSdI(record.transactionId);
  const fileName = record.fiscalId ?? `${record.transactionId}.xml`;
  const input: StubNotificationInput = {
    identificativoSdI, fileName, at: ctx.now, messageId: derivedDigits(record.transactionId, 'sdi-message-id', 10),
  };
  const duplicate = outcome.kind === 'reject' && outcome.code === '00404';
  const bodies = outcome.kind === 'accept'
    ? [stubRicevutaConsegna({ ...input, codiceDestinatario: destinatarioOf(record) })]
    : [stubNotificaScarto({ ...input, code: outcome.code })];
  if (duplicate) {
    // The copy SdI holds: its own IdentificativoSdI and message, delivered.
    bodies.push(stubRicevutaConsegna({
      ...input, identificativoSdI: stubHeldCopyIdentificativoSdI(record.transactionId),
      messageId: derivedDigits(record.transactionId, 'sdi-message-id-held', 10), codiceDestinatario: destinatarioOf(record),
    }));
  }
  return {
    kind: 'sent',
    reference: fileName,
    // As SdIRiceviFile answers (sdicoop.ts): the id SdI gives the file, kept at once.
    upstreamId: identificativoSdI,
    response: {
      sandbox: true, system: 'it-sdi', environment: ctx.environment, kind: record.kind,
      outcome: outcome.kind === 'accept' ? 'accept' : 'reject', IdentificativoSdI: identificativoSdI, NomeFile: fileName,
      notification: outcome.kind === 'accept' ? 'RC' : duplicate ? 'NS+RC' : 'NS', ...(outcome.kind === 'reject' ? { code: outcome.code } : {}),
      // As sdicoop.ts marks a file sent on a retry; the 00404 play is such a retry.
      ...(duplicate || ctx.attempt > 1 ? { resend: true } : {}),
    },
    notifications: bodies.map((body) => ({ body, contentType: 'application/xml' })),
  };
}
