/**
 * Records sent late go with `Cabecera/RemisionVoluntaria/Incidencia` S (incident.ts, soap.ts,
 * client.ts); the fake AEAT answers 2004 ("accepted with errors") to a late record without it.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeAeatVerifactu, soapBodyContent, type FakeAeatVerifactu } from '../../../test/support/fake-aeat-verifactu.ts';
import { HAVE_SCHEMAS, SCHEMAS_MISSING_MESSAGE, xsdValidate } from '../../../test/support/xml-tools.ts';
import { authorityPost, closeAuthorityConnections } from '../shared/authority-http.ts';
import { NOW, draft, fixedSigningKey, location, memoryPacing, stored, validatedBuild } from '../shared/test-fixtures.ts';
import type { StoredRecord, SubmitContext } from '../types.ts';
import { createVerifactuClient, verifactuEndpoint } from './client.ts';
import { INCIDENT_AFTER_SECONDS, generatedAt, sentAfterIncident } from './incident.ts';
import { verifactu } from './index.ts';
import { regFactuRequest, submissionEnvelope } from './soap.ts';

const key = fixedSigningKey();
const loc = location('es-verifactu');
const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000);

/** The chain's records 1..n, generated at the given seconds after NOW, stored as the core stores them. */
function chain(...seconds: number[]): StoredRecord[] {
  const out: StoredRecord[] = [];
  let previous: { fingerprint: string; fiscalId: null; issuedAt: string; linkData: Record<string, string> } | null = null;
  seconds.forEach((s, i) => {
    const { tx, record } = validatedBuild(verifactu, loc, draft(), { now: at(s), chain: { seq: i + 1, previous } });
    out.push(stored(record, tx));
    previous = { fingerprint: record.fingerprint!, fiscalId: null, issuedAt: at(s).toISOString(), linkData: record.linkData as Record<string, string> };
  });
  return out;
}

describe('which submissions are late (incident.ts)', () => {
  const [record] = chain(0);
  it('reads the record\'s FechaHoraHusoGenRegistro (Madrid time with its offset) as an instant', () => {
    expect(record!.body).toContain('<sf:FechaHoraHusoGenRegistro>2026-01-15T11:00:00+01:00</sf:FechaHoraHusoGenRegistro>');
    expect(generatedAt(record!.body)).toEqual(NOW);
    expect(generatedAt('<sf:RegistroAlta/>')).toBeUndefined();
    expect(generatedAt('<sf:FechaHoraHusoGenRegistro>yesterday</sf:FechaHoraHusoGenRegistro>')).toBeUndefined();
  });

  it(`late once a record is more than ${INCIDENT_AFTER_SECONDS} s old; one late record flags the request`, () => {
    expect(INCIDENT_AFTER_SECONDS).toBe(120);
    expect(sentAfterIncident([record!.body], at(120))).toBe(false);
    expect(sentAfterIncident([record!.body], at(121))).toBe(true);
    expect(sentAfterIncident([record!.body], at(-3600))).toBe(false); // not late (our clock behind: not an incident)
    const [old, fresh] = chain(0, 200);
    expect(sentAfterIncident([fresh!.body], at(210))).toBe(false);
    expect(sentAfterIncident([old!.body, fresh!.body], at(210))).toBe(true);
  });

  it(HAVE_SCHEMAS ? 'the flag sits in the Cabecera after ObligadoEmision and the request stays SuministroLR.xsd-valid' : SCHEMAS_MISSING_MESSAGE, () => {
    const xml = regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [record!.body], { incidencia: true });
    expect(xml).toContain('<sfLR:Cabecera><sf:ObligadoEmision><sf:NombreRazon>Ejemplo SL</sf:NombreRazon><sf:NIF>B12345674</sf:NIF></sf:ObligadoEmision>'
      + '<sf:RemisionVoluntaria><sf:Incidencia>S</sf:Incidencia></sf:RemisionVoluntaria></sfLR:Cabecera>');
    expect(regFactuRequest({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [record!.body])).not.toContain('RemisionVoluntaria');
    if (HAVE_SCHEMAS) {
      const v = xsdValidate(xml, 'es/verifactu/SuministroLR.xsd');
      expect(v.ok, v.output).toBe(true);
    }
  });
});

describe('the client flags late records; the fake AEAT answers 2004 without the flag', () => {
  let fake: FakeAeatVerifactu;
  beforeEach(async () => {
    fake = await startFakeAeatVerifactu();
    fake.waitSeconds = 0;
  });
  afterEach(() => fake.close());
  afterAll(() => closeAuthorityConnections());

  const ctx = (now: Date): SubmitContext => ({
    environment: 'test', mode: 'authority', location: loc, now, timeoutMs: 5000, attempt: 3,
    clientKey: key, authorityCa: fake.caPem, authorityBaseUrl: fake.url, pacing: memoryPacing(),
  });

  it('a record sent 10 minutes after it was generated (an outage) goes with Incidencia S and is accepted cleanly', async () => {
    fake.now = () => at(600);
    const [record] = chain(0);
    const out = await createVerifactuClient().submit(record!, ctx(at(600)));
    expect(out).toMatchObject({ kind: 'accepted', response: { EstadoRegistro: 'Correcto' } });
    expect(out.kind === 'accepted' && out.warnings).toBeUndefined();
    expect(fake.submissions.map((s) => s.incidencia)).toEqual(['S']);
  });

  it('a record sent in time goes without the flag', async () => {
    fake.now = () => at(5);
    const [record] = chain(0);
    expect(await createVerifactuClient().submit(record!, ctx(at(5)))).toMatchObject({ kind: 'accepted', response: { EstadoRegistro: 'Correcto' } });
    expect(fake.submissions.map((s) => s.incidencia)).toEqual([undefined]);
    expect(fake.requests[0]!.body.toString('utf8')).not.toContain('RemisionVoluntaria');
  });

  it('a batch of old and new records (one Cabecera): the whole request is flagged, every record accepted without 2004', async () => {
    fake.now = () => at(400);
    const records = chain(0, 100, 390);
    const out = await createVerifactuClient().submitMany(records, ctx(at(400)));
    expect(out.kind).toBe('records');
    if (out.kind === 'records') expect(out.outcomes.map((o) => o.kind === 'accepted' && o.warnings === undefined)).toEqual([true, true, true]);
    expect(fake.submissions).toHaveLength(1);
    expect(fake.submissions[0]!.incidencia).toBe('S');
  });

  it('the fake, as AEAT: a record older than 240 s without the flag is accepted with error 2004; one within 240 s is not', async () => {
    fake.now = () => at(300);
    const [old, recent] = chain(0, 100);
    // The records as a client without the flag would send them (mutual TLS, as the client does).
    const res = await authorityPost({
      url: verifactuEndpoint({ environment: 'test', authorityBaseUrl: fake.url }),
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
      body: submissionEnvelope({ nif: 'B12345674', nombreRazon: 'Ejemplo SL' }, [old!.body, recent!.body]),
      clientKey: key, ca: fake.caPem, timeoutMs: 5000,
    });
    const answer = soapBodyContent(res.body.toString('utf8'))!;
    expect(answer).toContain('<tikR:EstadoRegistro>AceptadoConErrores</tikR:EstadoRegistro><tikR:CodigoErrorRegistro>2004</tikR:CodigoErrorRegistro>');
    expect(answer.match(/<tikR:EstadoRegistro>Correcto<\/tikR:EstadoRegistro>/g)).toHaveLength(1);
    expect(fake.held('B12345674').map((h) => h.estado)).toEqual(['AceptadaConErrores', 'Correcta']);
  });
});
