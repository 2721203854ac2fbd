/**
 * The SdI notification reader: one fixture per notification type (fixtures/notifications,
 * each valid against the official MessaggiTypes_v1.1.xsd, checked here with xmllint), read
 * into the record to match, the status, what SdI said and the event; malformed documents
 * are 400s with a clear message.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../core/errors.ts';
import { generateCert } from '../../../test/support/p12.ts';
import { xadesSign } from '../../../test/support/xades-sign.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { sdi } from './index.ts';
import { MESSAGGI_NAMESPACES, sdiNotifications } from './notifications.ts';

const XSD = 'it/fatturapa/sdi/MessaggiTypes_v1.1.xsd';
const FIXTURES = ['RC', 'NS', 'MC', 'NE-EC01', 'NE-EC02', 'DT', 'AT'] as const;
const fixture = (name: (typeof FIXTURES)[number]): string =>
  fs.readFileSync(new URL(`./fixtures/notifications/${name}.xml`, import.meta.url), 'utf8');
// The reader itself: origin internal skips the signature check (the fixtures' signatures are placeholders; signed messages: below).
const read = (body: string) => sdiNotifications.read({ body, contentType: 'application/xml', origin: 'internal' });

function refused(body: string): string {
  try {
    read(body);
  } catch (e) {
    expect(e).toBeInstanceOf(ValidationError);
    return (e as Error).message;
  }
  throw new Error('expected a 400');
}

describe('SdI notification fixtures', () => {
  it.each(FIXTURES)('%s is valid against MessaggiTypes_v1.1.xsd (xmllint)', (name) => {
    if (!HAVE_SCHEMAS) {
      console.warn(`it-sdi notifications: ${SCHEMAS_MISSING_MESSAGE}`);
      return;
    }
    const v = xsdValidate(fixture(name), XSD);
    expect(v.output).toMatch(/validates$/);
    expect(v.ok).toBe(true);
  });
});

describe('the it-sdi inbound channel', () => {
  it('is the plug-in\'s: POST /v1/inbound/sdi with X-SDI-Secret, announcing transaction.sdi_status_changed', () => {
    expect(sdi.inbound).toBe(sdiNotifications);
    expect([sdiNotifications.name, sdiNotifications.secretHeader]).toEqual(['sdi', 'X-SDI-Secret']);
    expect(sdi.events).toEqual(['transaction.sdi_status_changed']);
  });

  it('RC delivers, matched by IdentificativoSdI or the file name', () => {
    expect(read(fixture('RC'))).toEqual({
      match: { upstreamId: '4242000101', fiscalId: 'IT01234567890_00001.xml' },
      upstreamId: '4242000101',
      status: 'delivered',
      event: 'transaction.sdi_status_changed',
      response: {
        notification: 'RC', type: 'RicevutaConsegna', IdentificativoSdI: '4242000101', NomeFile: 'IT01234567890_00001.xml',
        MessageId: '7000101', DataOraRicezione: '2026-11-20T10:00:05.000+01:00', DataOraConsegna: '2026-11-20T10:02:31.000+01:00',
        Destinatario: { Codice: 'ABC1234', Descrizione: 'Cliente di prova S.r.l.' },
      },
    });
  });

  it('NS rejects, with every error of ListaErrori (and our text of the codes we know)', () => {
    const m = read(fixture('NS'));
    expect(m).toMatchObject({ status: 'rejected', upstreamId: '4242000102', event: 'transaction.sdi_status_changed' });
    expect(m.response.ListaErrori).toEqual([
      { Codice: '00305', Descrizione: '1.4.1.1.2 <IdCodice> non valido : 00000000000', message: expect.stringContaining('buyer') },
      { Codice: '00423', Descrizione: expect.stringContaining('2.2.1.11 <PrezzoTotale>'), message: expect.stringContaining('PrezzoTotale') },
    ]);
  });

  it('NS keeps a Suggerimento (later schema revisions) and an error with a code we do not know', () => {
    const body = fixture('NS')
      .replace('<Codice>00423</Codice>', '<Codice>09999</Codice>')
      .replace('</Descrizione>\n    </Errore>\n  </ListaErrori>', '</Descrizione>\n      <Suggerimento>Verificare i totali</Suggerimento>\n    </Errore>\n  </ListaErrori>');
    const errors = read(body).response.ListaErrori as unknown[];
    expect(errors).toHaveLength(2);
    expect(errors[1]).toEqual({ Codice: '09999', Descrizione: expect.any(String), Suggerimento: 'Verificare i totali' });
  });

  it('a well-formed document nested deeper than the parser takes is a 400, not a crash', () => {
    const deep = '<a>'.repeat(20_000) + '</a>'.repeat(20_000);
    expect(() => read(deep)).toThrow(ValidationError);
    expect(() => read(deep)).toThrow(/^the SDI notification cannot be read: /);
  });

  it('MC marks the missed delivery (the invoice stays valid)', () => {
    expect(read(fixture('MC'))).toMatchObject({
      status: 'delivery_error', match: { upstreamId: '4242000103', fiscalId: 'IT01234567890_00003.xml' },
      response: { notification: 'MC', Descrizione: expect.stringContaining('area riservata') },
    });
  });

  it('AT (transmitted, not deliverable) is the state MC announces: delivery_error', () => {
    expect(read(fixture('AT'))).toMatchObject({
      status: 'delivery_error', event: 'transaction.sdi_status_changed',
      response: { notification: 'AT', HashFileOriginale: expect.stringMatching(/^[0-9a-f]{64}$/), Destinatario: { Codice: 'UFABCD' } },
    });
  });

  it('NE (EC01 accepted, EC02 refused) and DT are recorded without a status or an event', () => {
    const ec01 = read(fixture('NE-EC01'));
    expect(ec01).toMatchObject({ status: undefined, event: undefined, upstreamId: '4242000104' });
    expect(ec01.response).toMatchObject({
      notification: 'NE', esito: 'EC01',
      EsitoCommittente: { Esito: 'EC01', RiferimentoFattura: { NumeroFattura: 'FT-2026-0004', AnnoFattura: '2026' }, MessageIdCommittente: '8000104' },
    });
    const ec02 = read(fixture('NE-EC02'));
    expect(ec02).toMatchObject({ status: undefined, event: undefined });
    expect(ec02.response).toMatchObject({ esito: 'EC02', EsitoCommittente: { Esito: 'EC02', Descrizione: 'Importo non corrispondente all\'ordine' } });
    expect(read(fixture('DT'))).toMatchObject({
      status: undefined, event: undefined, match: { upstreamId: '4242000106', fiscalId: 'IT01234567890_00006.xml' },
      response: { notification: 'DT', Descrizione: expect.stringContaining('Decorsi') },
    });
  });

  it('reads either messages namespace, any prefix or none, a BOM, with or without a signature', () => {
    const other = fixture('RC').replace(MESSAGGI_NAMESPACES[0]!, MESSAGGI_NAMESPACES[1]!);
    expect(read(other).status).toBe('delivered');
    const ns3 = fixture('RC').replaceAll('types:', 'ns3:').replace('xmlns:types=', 'xmlns:ns3=');
    expect(read(ns3).status).toBe('delivered');
    const unprefixed = fixture('MC').replaceAll('types:', '').replace('xmlns:types=', 'xmlns=');
    expect(read(unprefixed).status).toBe('delivery_error');
    expect(read(`\uFEFF${fixture('DT')}`).response.notification).toBe('DT');
    const unsigned = fixture('RC').replace(/<ds:Signature[\s\S]*<\/ds:Signature>\n/, '');
    expect(read(unsigned).status).toBe('delivered');
  });

  it('refuses what it cannot read with a clear 400', () => {
    expect(refused('')).toBe('the SDI notification is empty');
    expect(refused('<types:RicevutaConsegna><unclosed></types:RicevutaConsegna>')).toBe('the SDI notification is not well-formed XML');
    expect(refused('not xml at all')).toBe('the SDI notification is not well-formed XML');
    expect(refused('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "b">]><x>&a;</x>')).toBe('an SDI notification must not carry a DOCTYPE');
    expect(refused('<Fattura/>')).toMatch(/^not an SDI notification \(root element Fattura without the messages namespace\): expected RicevutaConsegna \(RC\)/);
    // A known root in another namespace.
    expect(refused(fixture('RC').replace(MESSAGGI_NAMESPACES[0]!, 'urn:elsewhere'))).toMatch(/^not an SDI notification \(root element RicevutaConsegna in urn:elsewhere\)/);
    // Recipient-side messages.
    expect(refused(`<types:MetadatiInvioFile xmlns:types="${MESSAGGI_NAMESPACES[0]}" versione="1.0"/>`))
      .toMatch(/^MetadatiInvioFile is a message for invoice recipients/);
  });

  it.each([
    ['RC', '<IdentificativoSdI>4242000101</IdentificativoSdI>', '', 'RicevutaConsegna (RC) is missing its IdentificativoSdI'],
    ['RC', '<NomeFile>IT01234567890_00001.xml</NomeFile>', '', 'RicevutaConsegna (RC) is missing its NomeFile'],
    ['RC', '<MessageId>7000101</MessageId>', '', 'RicevutaConsegna (RC) is missing its MessageId'],
    ['RC', /<DataOraConsegna>.*<\/DataOraConsegna>/, '', 'RicevutaConsegna (RC) is missing its DataOraConsegna'],
    ['RC', '<Codice>ABC1234</Codice>', '', 'RicevutaConsegna (RC) Destinatario is missing its Codice'],
    ['RC', '<IdentificativoSdI>4242000101</IdentificativoSdI>', '<IdentificativoSdI>42-42</IdentificativoSdI>',
      'RicevutaConsegna (RC): IdentificativoSdI must be an integer of up to 12 digits'],
    ['RC', '<IdentificativoSdI>4242000101</IdentificativoSdI>', '<IdentificativoSdI></IdentificativoSdI>', 'RicevutaConsegna (RC) is missing its IdentificativoSdI'],
    ['NS', /<ListaErrori>[\s\S]*<\/ListaErrori>/, '', 'NotificaScarto (NS) is missing its ListaErrori'],
    ['NS', /<ListaErrori>[\s\S]*<\/ListaErrori>/, '<ListaErrori></ListaErrori>', 'NotificaScarto (NS) is missing its ListaErrori'],
    ['NS', /<ListaErrori>[\s\S]*<\/ListaErrori>/, '<ListaErrori><Nota>x</Nota></ListaErrori>', 'NotificaScarto (NS): ListaErrori has no Errore'],
    ['NS', '<Codice>00423</Codice>', '', 'NotificaScarto (NS): Errore 2 is missing its Codice'],
    ['MC', /<DataOraRicezione>.*<\/DataOraRicezione>/, '', 'NotificaMancataConsegna (MC) is missing its DataOraRicezione'],
    ['NE-EC01', /<EsitoCommittente [\s\S]*<\/EsitoCommittente>/, '', 'NotificaEsito (NE) is missing its EsitoCommittente'],
    ['NE-EC01', '<Esito>EC01</Esito>', '<Esito>EC03</Esito>', 'NotificaEsito (NE): EsitoCommittente/Esito must be EC01 or EC02, not EC03'],
    ['NE-EC01', '<Esito>EC01</Esito>', '', 'NotificaEsito (NE) EsitoCommittente is missing its Esito'],
    ['DT', '<NomeFile>IT01234567890_00006.xml</NomeFile>', '', 'NotificaDecorrenzaTermini (DT) is missing its NomeFile'],
    ['AT', /<HashFileOriginale>.*<\/HashFileOriginale>/, '', 'AttestazioneTrasmissioneFattura (AT) is missing its HashFileOriginale'],
  ] as const)('%s without what the XSD requires (%s) is a 400', (name, find, replacement, message) => {
    const body = fixture(name).replace(find, replacement);
    expect(body).not.toBe(fixture(name));
    expect(refused(body)).toBe(message);
  });

  it('never fails otherwise: every truncation and element-stripped variant of every fixture reads or is a 400', () => {
    for (const name of FIXTURES) {
      const body = fixture(name);
      const variants = [
        ...Array.from({ length: Math.ceil(body.length / 7) }, (_, i) => body.slice(0, i * 7)),
        ...[...body.matchAll(/<(\w+)>[^<]*<\/\1>/g)].map((m) => body.replace(m[0], '')),
        ...[...body.matchAll(/<(\w+)>[^<]*<\/\1>/g)].map((m) => body.replace(m[0], `<${m[1]}><x>1</x></${m[1]}>`)),
      ];
      for (const v of variants) {
        try {
          read(v);
        } catch (e) {
          expect(e, v).toBeInstanceOf(ValidationError);
        }
      }
    }
  });
});

describe('signed notifications (a posted message: its ds:Signature verified)', () => {
  const sdiKey = generateCert({ subject: '/C=IT/O=Sistema di Interscambio/CN=Fake SdI', withCa: true, days: 3650 });
  const stranger = generateCert({ subject: '/C=IT/CN=Not SdI', withCa: true });
  const unsigned = (name: (typeof FIXTURES)[number]) => fixture(name).replace(/\s*<ds:Signature[\s\S]*<\/ds:Signature>/, '');
  const signed = (name: (typeof FIXTURES)[number]) => xadesSign(unsigned(name), { keyPem: sdiKey.keyPem, certPem: sdiKey.certPem });
  const now = new Date();
  const posted = (body: string, trustedCa?: string) => sdiNotifications.read({ body, contentType: 'application/xml', origin: 'posted', trustedCa, now });
  const refusedPosted = (body: string, trustedCa?: string): string => {
    try {
      posted(body, trustedCa);
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      return (e as Error).message;
    }
    throw new Error('expected a 400');
  };

  it('a signed notification (xmlsec1, XAdES-BES) verifies; the signer is recorded, trusted when the CA is configured', () => {
    const rc = signed('RC');
    if (HAVE_SCHEMAS) expect(xsdValidate(rc, XSD).ok).toBe(true);
    expect(posted(rc)).toMatchObject({ status: 'delivered', response: { signature: { signer: expect.stringContaining('CN=Fake SdI'), trusted: false } } });
    expect(posted(rc, sdiKey.caPem).response.signature).toEqual({ signer: expect.stringContaining('CN=Fake SdI'), trusted: true });
  });

  it('a tampered, re-addressed or foreign-signed notification is a 400 naming the failure', () => {
    const rc = signed('RC');
    expect(refusedPosted(rc.replace('<NomeFile>IT01234567890_00001.xml', '<NomeFile>IT01234567890_00009.xml'))).toBe(
      'the SDI notification signature does not verify: Reference 1 (URI=""): the digest does not match (the content was altered)');
    expect(refusedPosted(signed('NS').replace('<Codice>00305</Codice>', '<Codice>00404</Codice>'))).toMatch(/digest does not match/);
    expect(refusedPosted(rc, stranger.caPem)).toBe(
      'the SDI notification signature does not verify: the signing certificate is not issued by a trusted certificate authority');
    // The fixtures' placeholder signatures do not verify either.
    expect(refusedPosted(fixture('RC'))).toMatch(/^the SDI notification signature does not verify: /);
  });

  it('unsigned: read when no CA is configured; refused when one is', () => {
    expect(posted(unsigned('MC')).status).toBe('delivery_error');
    expect(posted(unsigned('MC')).response.signature).toBeUndefined();
    expect(refusedPosted(unsigned('MC'), sdiKey.caPem)).toBe(
      'the SDI notification is not signed: only signed notifications are accepted (SDI_NOTIFICATION_CA_FILE is set)');
  });

  it('never a 500: every truncation and element-stripped variant of a signed notification reads or is a 400', () => {
    const body = signed('NS');
    const variants = [
      ...Array.from({ length: Math.ceil(body.length / 23) }, (_, i) => body.slice(0, i * 23)),
      ...[...body.matchAll(/<([\w:]+)[^>]*>[^<]*<\/\1>/g)].map((m) => body.replace(m[0], '')),
      ...[...body.matchAll(/<([\w:]+)[^>]*>[^<]*<\/\1>/g)].map((m) => body.replace(m[0], `<${m[1]}>AAAA</${m[1]}>`)),
    ];
    for (const v of variants) {
      for (const ca of [undefined, sdiKey.caPem]) {
        try {
          posted(v, ca);
        } catch (e) {
          expect(e, v).toBeInstanceOf(ValidationError);
        }
      }
    }
  });
});

describe('NS 00002/00404 (SdI already has the file or the invoice)', () => {
  const only = (codice: string) => fixture('NS').replace(/<ListaErrori>[\s\S]*<\/ListaErrori>/,
    `<ListaErrori>\n    <Errore>\n      <Codice>${codice}</Codice>\n      <Descrizione>Duplicato</Descrizione>\n    </Errore>\n  </ListaErrori>`);
  const payload = (resend: boolean) => ({ authority: { IdentificativoSdI: '4242000102', ...(resend ? { resend: true } : {}) }, awaiting_notification: true });

  it.each(['00404', '00002'])('an NS whose only error is %s is a duplicate notice: a rejection when we sent the file once, nothing when we resent it', (codice) => {
    if (HAVE_SCHEMAS) expect(xsdValidate(only(codice), XSD).ok).toBe(true);
    const m = read(only(codice));
    expect(m).toMatchObject({
      match: { upstreamId: '4242000102', fiscalId: 'IT01234567890_00002.xml', history: 'IdentificativoSdI' },
      status: 'rejected',
      response: { notification: 'NS', duplicate: true, ListaErrori: [{ Codice: codice }] },
    });
    // Not the record's id: a duplicate may be about another copy.
    expect(m.upstreamId).toBeUndefined();
    expect(m.resolve!({ status: 'pending', response_payload: payload(false) })).toEqual({
      status: 'rejected', event: 'transaction.sdi_status_changed', failure: { code: codice, message: expect.stringContaining('Duplicate') },
    });
    expect(m.resolve!({ status: 'pending', response_payload: payload(true) })).toEqual({});
    expect(m.resolve!({ status: 'delivered', response_payload: payload(true) })).toEqual({});
    // Settled by the held copy's own notification, the resend's duplicate after it: recorded only.
    expect(m.resolve!({ status: 'delivered', response_payload: payload(false) })).toEqual({});
    // The attempt's answer not stored or lost (its outcome unknown): nothing moves either.
    for (const status of ['processing', 'failed', 'failed_permanent']) {
      expect(m.resolve!({ status, response_payload: { submit_error: { error_code: 'timeout' } } })).toEqual({});
    }
    // Before the submit job stored SdI's answer (the notice raced it): unknown, nothing moves.
    expect(m.resolve!({ status: 'pending', response_payload: { submit_error: { error_code: 'timeout' } } })).toEqual({});
  });

  it('an NS carries its failure for the core (first code, our text of it, the other codes named); RC, MC and the others none', () => {
    const m = read(fixture('NS'));
    expect(m.failure).toEqual({ code: '00305', message: expect.stringMatching(/\(and 1 more: 00423\)$/) });
    for (const kind of ['RC', 'MC', 'DT', 'AT'] as const) expect(read(fixture(kind)).failure).toBeUndefined();
  });

  it('00404 with any other error is a rejection like any NS', () => {
    const mixed = fixture('NS').replace('<Codice>00305</Codice>', '<Codice>00404</Codice>');
    const m = read(mixed);
    expect(m).toMatchObject({ status: 'rejected', upstreamId: '4242000102', event: 'transaction.sdi_status_changed' });
    expect(m.response.duplicate).toBeUndefined();
    expect(m.resolve).toBeUndefined();
  });
});
