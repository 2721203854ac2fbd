/**
 * The stub SdI (sandbox.ts): it answers `sent` with the IdentificativoSdI and the
 * notification a real SdI would send, an RC or an NS in MessaggiTypes 1.1 (valid against
 * the XSD, xmllint with the catalog, as the fixtures are), which the channel reads.
 */
import { describe, expect, it } from 'vitest';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import type { StoredRecord, SubmitContext } from '../types.ts';
import { sdi } from './index.ts';
import { sdiNotifications } from './notifications.ts';
import { sdiSubmit, stubHeldCopyIdentificativoSdI, stubIdentificativoSdI } from './sandbox.ts';

const XSD = 'it/fatturapa/sdi/MessaggiTypes_v1.1.xsd';
const TX = '0190a0b0-0000-7000-8000-00000000abcd';
const FILE = 'IT01234567890_0000A.xml';
const record = (metadata: Record<string, unknown>): StoredRecord => ({
  transactionId: TX, kind: 'record', body: '<FatturaElettronica/>', contentType: 'application/xml', fiscalId: FILE,
  tx: { metadata } as unknown as StoredRecord['tx'],
});
const ctx = { environment: 'test', mode: 'stub', now: new Date('2026-11-20T10:00:00.000Z'), timeoutMs: 1000, attempt: 1 } as unknown as SubmitContext;

async function notification(metadata: Record<string, unknown>): Promise<string> {
  const out = await sdi.submit(record(metadata), ctx);
  expect(out).toMatchObject({ kind: 'sent', reference: FILE, response: { IdentificativoSdI: stubIdentificativoSdI(TX) } });
  if (out.kind !== 'sent') throw new Error('expected sent');
  expect(out.notifications).toHaveLength(1);
  expect(out.notifications![0]!.contentType).toBe('application/xml');
  return out.notifications![0]!.body;
}

function valid(xml: string): void {
  if (!HAVE_SCHEMAS) {
    console.warn(`it-sdi sandbox: ${SCHEMAS_MISSING_MESSAGE}`);
    return;
  }
  const v = xsdValidate(xml, XSD);
  expect(v.output).toMatch(/validates$/);
  expect(v.ok).toBe(true);
}

describe('the stub SdI', () => {
  it('accept: sent, with an RC valid against MessaggiTypes_v1.1.xsd naming the file and the IdentificativoSdI', async () => {
    const xml = await notification({ codice_destinatario: 'ABC1234' });
    valid(xml);
    const m = sdiNotifications.read({ body: xml, contentType: 'application/xml', origin: 'internal' });
    expect(m).toMatchObject({
      match: { upstreamId: stubIdentificativoSdI(TX), fiscalId: FILE }, status: 'delivered', event: 'transaction.sdi_status_changed',
      response: { notification: 'RC', NomeFile: FILE, Destinatario: { Codice: 'ABC1234' }, DataOraConsegna: '2026-11-20T10:00:00.000Z' },
    });
  });

  it('reject:00311: sent, with an NS listing the code and its description, valid against the XSD', async () => {
    const xml = await notification({ sandbox_outcome: 'reject:00311' });
    valid(xml);
    const m = sdiNotifications.read({ body: xml, contentType: 'application/xml', origin: 'internal' });
    expect(m).toMatchObject({
      status: 'rejected',
      response: { notification: 'NS', IdentificativoSdI: stubIdentificativoSdI(TX), NomeFile: FILE, ListaErrori: [{ Codice: '00311', Descrizione: expect.stringContaining('CodiceDestinatario') }] },
    });
  });

  it('reject:00404: a duplicate notice for our copy (no status) and the RC of the copy SdI held, both valid against the XSD', async () => {
    const out = await sdi.submit(record({ sandbox_outcome: 'reject:00404' }), ctx);
    if (out.kind !== 'sent') throw new Error(`expected sent, got ${out.kind}`);
    const [ns, rc] = (out.notifications ?? []).map((n) => n.body);
    valid(ns!);
    valid(rc!);
    // Marked as a resend, as a retry is: the duplicate notice then changes nothing.
    expect(out.response).toMatchObject({ resend: true, IdentificativoSdI: stubIdentificativoSdI(TX) });
    const m = sdiNotifications.read({ body: ns!, contentType: 'application/xml', origin: 'internal' });
    expect(m).toMatchObject({
      match: { upstreamId: stubIdentificativoSdI(TX), fiscalId: FILE, history: 'IdentificativoSdI' },
      response: { notification: 'NS', duplicate: true, ListaErrori: [{ Codice: '00404' }] },
    });
    expect(m.resolve!({ status: 'pending', response_payload: { authority: out.response } })).toEqual({});
    expect(sdiNotifications.read({ body: rc!, contentType: 'application/xml', origin: 'internal' })).toMatchObject({
      match: { upstreamId: stubHeldCopyIdentificativoSdI(TX), fiscalId: FILE }, status: 'delivered',
    });
  });

  it('an unknown code still gives a valid NS; timeout and error:<code> stay as every stub answers them', async () => {
    valid(await notification({ sandbox_outcome: 'reject:00999' }));
    await expect(sdi.submit(record({ sandbox_outcome: 'timeout' }), ctx)).rejects.toMatchObject({ code: 'timeout' });
    expect(await sdi.submit(record({ sandbox_outcome: 'error:00200' }), ctx)).toMatchObject({ kind: 'retry_later', code: '00200' });
    // The stub answers stub mode only; authority mode is the SdICoop client (sdi-authority.test.ts).
    await expect(sdiSubmit(record({}), { ...ctx, mode: 'authority' })).rejects.toMatchObject({ code: 'not_stub' });
  });
});
