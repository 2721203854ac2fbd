import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { officialSample, sampleVariant, startFakeTicketBai, type FakeTicketBai } from '../../../test/support/fake-ticketbai.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE } from '../../../test/support/xml-tools.ts';
import { closeAuthorityConnections } from '../shared/authority-http.ts';
import { NOW, buildInput, draft, fixedSigningKey, location, memoryPacing } from '../shared/test-fixtures.ts';
import { ticketBai } from './index.ts';
import { TransportError, type StoredRecord, type SubmitContext } from '../types.ts';
import { submitTicketBaiRealtime, ticketBaiEndpoint } from './rest-client.ts';

/** The official samples live beside the schemas: without them these tests cannot run. */
const withSamples = (name: string, fn: () => Promise<void>, timeout?: number) =>
  HAVE_SCHEMAS ? it(name, fn, timeout) : it.skip(`${name} (${SCHEMAS_MISSING_MESSAGE})`, fn);

const SAMPLE_01_TBAI_ID = 'TBAI-99999974E-290224-Yl3mXsALUBz6H-135'; // FORMATS.md test vectors

describe('TicketBAI endpoints (FORMATS.md §1.6)', () => {
  it('per territory, environment and kind', () => {
    expect(ticketBaiEndpoint('gipuzkoa', 'alta', 'live')).toBe('https://tbai-z.egoitza.gipuzkoa.eus/sarrerak/alta');
    expect(ticketBaiEndpoint('gipuzkoa', 'anulacion', 'test')).toBe('https://tbai-z.prep.gipuzkoa.eus/sarrerak/baja');
    expect(ticketBaiEndpoint('araba', 'alta', 'live')).toBe('https://ticketbai.araba.eus/TicketBAI/v1/facturas/');
    expect(ticketBaiEndpoint('araba', 'anulacion', 'test')).toBe('https://pruebas-ticketbai.araba.eus/TicketBAI/v1/anulaciones/');
  });

  it('a base URL replaces scheme and host and keeps the path', () => {
    expect(ticketBaiEndpoint('gipuzkoa', 'alta', 'live', 'https://127.0.0.1:8443/')).toBe('https://127.0.0.1:8443/sarrerak/alta');
    expect(ticketBaiEndpoint('araba', 'anulacion', 'live', 'https://proxy.test/tbai')).toBe('https://proxy.test/tbai/TicketBAI/v1/anulaciones/');
  });
});

describe('Gipuzkoa / Araba real-time client against the fake authority', () => {
  let fake: FakeTicketBai;
  const key = fixedSigningKey();
  const ctx = (over: Partial<SubmitContext> = {}): SubmitContext => ({
    environment: 'test',
    mode: 'authority',
    location: location('es-ticketbai'),
    now: NOW,
    authorityBaseUrl: fake.url,
    authorityCa: fake.caPem,
    clientKey: key,
    timeoutMs: 5000,
    attempt: 1,
    pacing: memoryPacing(),
    ...over,
  });
  const record = (body: string, kind: StoredRecord['kind'] = 'record', fiscalId: string | null = null): StoredRecord => ({
    transactionId: 'tx-1',
    kind,
    body,
    contentType: 'application/xml',
    fiscalId,
    tx: draft(),
  });

  beforeAll(async () => {
    fake = await startFakeTicketBai();
  });
  beforeEach(() => fake.reset());
  afterAll(async () => {
    await closeAuthorityConnections();
    await fake.close();
  });

  withSamples('accepts a valid invoice: TBAI id and CSV, over mutual TLS', async () => {
    const o = await submitTicketBaiRealtime(record(officialSample('alta-01')), ctx(), 'gipuzkoa');
    expect(o.kind).toBe('accepted');
    if (o.kind !== 'accepted') return;
    expect(o.fiscalId).toBe(SAMPLE_01_TBAI_ID);
    expect(o.response.csv).toMatch(/^TBAI/);
    const req = fake.requests.at(-1)!;
    expect(req.path).toBe('/sarrerak/alta');
    expect(req.headers['content-type']).toMatch(/^application\/xml/);
    expect(req.clientCert.fingerprint256).toBe(key.certificate.fingerprint256);
    expect(req.body.toString('utf8')).toBe(officialSample('alta-01'));
  });

  withSamples('the same invoice twice is a duplicate (005), not a failure', async () => {
    await submitTicketBaiRealtime(record(officialSample('alta-01')), ctx(), 'gipuzkoa');
    const o = await submitTicketBaiRealtime(record(officialSample('alta-01')), ctx(), 'gipuzkoa');
    expect(o).toMatchObject({ kind: 'duplicate', fiscalId: SAMPLE_01_TBAI_ID });
  });

  withSamples('a rejection carries the validation code', async () => {
    fake.rejectWhen(({ number }) => (number === '2' ? { code: '011', message: 'Error en datos de negocio' } : undefined));
    const o = await submitTicketBaiRealtime(record(officialSample('alta-02')), ctx(), 'araba');
    expect(o).toMatchObject({ kind: 'rejected', code: '011', message: 'Error en datos de negocio' });
    expect(fake.requests.at(-1)!.path).toBe('/TicketBAI/v1/facturas/');
  });

  withSamples('a file that does not validate is rejected with 002', async () => {
    const broken = officialSample('alta-01').replace(/<IDVersionTBAI>1\.2<\/IDVersionTBAI>/, '<IDVersionTBAI>9.9</IDVersionTBAI>');
    const o = await submitTicketBaiRealtime(record(broken), ctx(), 'gipuzkoa');
    expect(o).toMatchObject({ kind: 'rejected', code: '002' });
    expect(fake.xsdFailures.at(-1)).toMatch(/IDVersionTBAI/);
  });

  withSamples('a cancellation goes to the baja endpoint; each Hacienda keeps its own books', async () => {
    const first = await submitTicketBaiRealtime(record(officialSample('anulacion-02'), 'cancellation'), ctx(), 'gipuzkoa');
    expect(first.kind).toBe('accepted');
    expect(fake.requests.at(-1)!.path).toBe('/sarrerak/baja');
    const araba = await submitTicketBaiRealtime(record(officialSample('anulacion-02'), 'cancellation'), ctx(), 'araba');
    expect(araba.kind).toBe('accepted');
  });

  withSamples('a cancellation sent twice to the same service is a duplicate (019)', async () => {
    await submitTicketBaiRealtime(record(officialSample('anulacion-02'), 'cancellation'), ctx(), 'araba');
    const again = await submitTicketBaiRealtime(record(officialSample('anulacion-02'), 'cancellation'), ctx(), 'araba');
    expect(again.kind).toBe('duplicate');
    expect(fake.requests.at(-1)!.path).toBe('/TicketBAI/v1/anulaciones/');
  });

  withSamples('a variant invoice (other number) is accepted with its own TBAI id', async () => {
    const o = await submitTicketBaiRealtime(record(sampleVariant(officialSample('alta-01'), { number: '7' })), ctx(), 'gipuzkoa');
    expect(o).toMatchObject({ kind: 'accepted' });
    if (o.kind === 'accepted') expect(o.fiscalId).toMatch(/^TBAI-99999974E-290224-Var0000000007-\d{3}$/);
  });

  it('the fake applies the Haciendas\' business rules: a rectificativa naming no corrected invoice (011); Araba, a DFA_ series (004)', async () => {
    // Built without validation (./foral-rules.ts refuses both at create): what an older
    // stored transaction or another client could still send.
    const build = (tx: Parameters<typeof draft>[0], loc = location('es-ticketbai')) =>
      ticketBai.build(buildInput(loc, { ...draft(tx), metadata: { series: 'RA', invoice_type: 'R5', ...(tx?.metadata ?? {}) } }, { signingKey: key })).body;
    for (const territory of ['gipuzkoa', 'araba'] as const) {
      const bare = await submitTicketBaiRealtime(record(build({ type: 'refund' })), ctx(), territory);
      expect(bare).toMatchObject({ kind: 'rejected', code: '011' });
    }
    const named = await submitTicketBaiRealtime(
      record(build({ type: 'refund', metadata: { original_invoice_number: '1', original_issue_date: '14-01-2026' } })), ctx(), 'gipuzkoa');
    expect(named.kind).toBe('accepted');
    const dfa = build({ metadata: { series: 'DFA_1', invoice_type: 'F2' } });
    expect(await submitTicketBaiRealtime(record(dfa), ctx(), 'araba')).toMatchObject({ kind: 'rejected', code: '004' });
    expect((await submitTicketBaiRealtime(record(dfa), ctx(), 'gipuzkoa')).kind).toBe('accepted');
  });

  it('the fake answers a recipient NIF whose control character is wrong as Araba (010 068-AVISO) and Gipuzkoa (1153) do: received, with a warning', async () => {
    // Built without validation (./foral-rules.ts refuses it at create).
    const build = (nif: string) =>
      ticketBai.build(buildInput(location('es-ticketbai'), { ...draft({ customer_context: { nif, name: 'Cliente' } }), metadata: { series: 'NIF', invoice_type: 'F1' } }, { signingKey: key })).body;
    const gipuzkoa = await submitTicketBaiRealtime(record(build('B95123452')), ctx(), 'gipuzkoa');
    expect(gipuzkoa).toMatchObject({ kind: 'accepted', warnings: [expect.stringMatching(/^1153: /)] });
    const araba = await submitTicketBaiRealtime(record(build('B95123452')), ctx(), 'araba');
    expect(araba).toMatchObject({ kind: 'accepted', warnings: [expect.stringMatching(/^010: 068-AVISO/)] });
    const correct = await submitTicketBaiRealtime(record(build('B95123451')), ctx(), 'araba');
    expect(correct.kind).toBe('accepted');
    expect(correct).not.toHaveProperty('warnings');
  });

  it('503 without a TicketBAI answer is a transport fault', async () => {
    fake.failWith(503);
    const err = await submitTicketBaiRealtime(record('<x/>'), ctx(), 'gipuzkoa').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('server_error');
  });

  it('a silent authority times out', async () => {
    fake.hang(true);
    const err = await submitTicketBaiRealtime(record('<x/>'), ctx({ timeoutMs: 300 }), 'gipuzkoa').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect((err as TransportError).code).toBe('timeout');
  });

  it('without a client certificate the authority refuses', async () => {
    const o = await submitTicketBaiRealtime(record('<x/>'), ctx({ clientKey: undefined }), 'gipuzkoa');
    expect(o).toMatchObject({ kind: 'rejected', code: 'http_403' });
    expect(fake.requests.at(-1)!.clientCert && Object.keys(fake.requests.at(-1)!.clientCert)).toHaveLength(0);
  });
});
