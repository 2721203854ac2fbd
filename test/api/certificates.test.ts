import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCertificateService } from '../../src/services/certificates.ts';
import { startTestApp, type TestApp } from '../support/harness.ts';
import { createTx, saleBody } from '../support/transactions.ts';
import { configs, locationBodies, RANDOM_UUID } from '../support/fixtures.ts';
import {
  exportP12, exportP12With, forgeP12, generateCert, generateChainCert, multipartBody, p12Info, uploadForm, type GeneratedCert, type P12Kind,
} from '../support/p12.ts';

/*
 * Certificates end to end with real PKCS#12 files made by the openssl CLI in the setup:
 * modern (AES-256-CBC/PBKDF2, the OpenSSL 3 default), legacy (-legacy: RC2-40 + 3DES)
 * and 3DES; the stored row is checked for clear key material.
 */
let t: TestApp;
let cert: GeneratedCert;
let chained: GeneratedCert;
const PASSWORD = 'correct horse';
const p12: Partial<Record<P12Kind, Buffer>> = {};

beforeAll(async () => {
  t = await startTestApp();
  cert = generateCert();
  chained = generateCert({ withCa: true, subject: '/C=ES/serialNumber=VATES-B12345674/O=Ejemplo SL/CN=Sello Ejemplo' });
  for (const kind of ['modern', 'legacy', '3des'] as const) p12[kind] = exportP12(cert, PASSWORD, kind);
});
afterAll(() => t.close());

const CERT_FIELDS = ['id', 'certificate_id', 'subject_cn', 'issuer', 'not_before', 'not_after', 'nif', 'created_at'].sort();
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const upload = (key: string, form: Parameters<typeof uploadForm>[0]) => {
  const { payload, headers } = uploadForm(form);
  return t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
};
const list = (key: string) => t.request({ method: 'GET', url: '/v1/certificates', key });
const del = (key: string, id: string) => t.request({ method: 'DELETE', url: `/v1/certificates/${encodeURIComponent(id)}`, key });

async function uploaded(key: string, certificateId: string, file = p12.modern!): Promise<Record<string, any>> {
  const res = await upload(key, { certificateId, password: PASSWORD, file });
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

async function restrictedKey(rootKey: string, permissions: string[]): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/v1/api-keys', key: rootKey, payload: { name: 'restricted', permissions } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().key;
}

describe('the test files are what they claim', () => {
  it('modern = PBES2/PBKDF2/AES-256-CBC, legacy = RC2-40, 3des = 3DES', () => {
    expect(p12Info(p12.modern!, PASSWORD)).toMatch(/PBES2, PBKDF2, AES-256-CBC/);
    expect(p12Info(p12.legacy!, PASSWORD)).toMatch(/pbeWithSHA1And40BitRC2-CBC/);
    expect(p12Info(p12['3des']!, PASSWORD)).toMatch(/pbeWithSHA1And3-KeyTripleDES-CBC/);
  });
});

describe('POST /v1/certificates', () => {
  it.each(['modern', 'legacy', '3des'] as const)('%s PKCS#12 → 201 with the metadata', async (kind) => {
    const { key } = await t.signup();
    const before = Date.now();
    const res = await upload(key, { certificateId: `es-${kind}.v1_a`, password: PASSWORD, file: p12[kind]! });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(CERT_FIELDS);
    expect(body).toEqual({
      id: expect.stringMatching(UUID_RE),
      certificate_id: `es-${kind}.v1_a`,
      subject_cn: 'Test Signer',
      issuer: 'CN=Test Signer,serialNumber=IDCES-12345678Z,C=ES',
      not_before: cert.notBefore.toISOString(),
      not_after: cert.notAfter.toISOString(),
      nif: '12345678Z',
      created_at: expect.any(String),
    });
    expect(Date.parse(body.created_at)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('a chained certificate: issuer is the CA, VATES- serialNumber gives the NIF; listed', async () => {
    const { key } = await t.signup();
    const body = await uploaded(key, 'seal', exportP12(chained, PASSWORD));
    expect(body).toMatchObject({ subject_cn: 'Sello Ejemplo', issuer: 'CN=Test Issuing CA,O=Test CA Org,C=ES', nif: 'B12345674' });
    const res = await list(key);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ data: [body] });
  });

  it('plain serialNumber is the NIF; no serialNumber → nif null; EC keys work', async () => {
    const { key } = await t.signup();
    const plain = await uploaded(key, 'plain', exportP12(generateCert({ subject: '/C=ES/serialNumber=B12345674/CN=Plain', keyType: 'ec' }), PASSWORD));
    expect(plain).toMatchObject({ subject_cn: 'Plain', nif: 'B12345674' });
    const none = await uploaded(key, 'none', exportP12(generateCert({ subject: '/CN=No Serial' }), PASSWORD));
    expect(none).toMatchObject({ subject_cn: 'No Serial', nif: null });
  });

  it('an empty password is a password (openssl -passout pass:)', async () => {
    const { key } = await t.signup();
    const res = await upload(key, { certificateId: 'nopass', password: '', file: exportP12(cert, '') });
    expect(res.statusCode, res.body).toBe(201);
  });

  describe('400s', () => {
    let key: string;
    beforeAll(async () => ({ key } = await t.signup()));
    const cases: Array<[string, Parameters<typeof uploadForm>[0] | (() => Parameters<typeof uploadForm>[0]), string]> = [
      ['missing certificate_id', () => ({ password: PASSWORD, file: p12.modern! }), 'certificate_id is required'],
      ['blank certificate_id', () => ({ certificateId: '  ', password: PASSWORD, file: p12.modern! }), 'certificate_id is required'],
      ['certificate_id with a space', () => ({ certificateId: 'my cert', password: PASSWORD, file: p12.modern! }), 'certificate_id must be 1-128 characters: letters, digits, hyphen, underscore, dot'],
      ['certificate_id with a slash', () => ({ certificateId: 'a/b', password: PASSWORD, file: p12.modern! }), 'certificate_id must be 1-128 characters: letters, digits, hyphen, underscore, dot'],
      ['certificate_id too long', () => ({ certificateId: 'a'.repeat(129), password: PASSWORD, file: p12.modern! }), 'certificate_id must be 1-128 characters: letters, digits, hyphen, underscore, dot'],
      ['missing password', () => ({ certificateId: 'c1', file: p12.modern! }), 'password is required'],
      ['password over 4 KiB', () => ({ certificateId: 'c1', password: 'x'.repeat(5000), file: p12.modern! }), 'password is too long'],
      ['missing file', () => ({ certificateId: 'c1', password: PASSWORD }), 'certificate file is required'],
      ['empty file', () => ({ certificateId: 'c1', password: PASSWORD, file: Buffer.alloc(0) }), 'certificate file is required'],
      ['garbage file', () => ({ certificateId: 'c1', password: PASSWORD, file: crypto.randomBytes(2048) }), 'certificate file is not a readable PKCS#12 (.p12/.pfx) file'],
      ['a PEM instead of a PKCS#12', () => ({ certificateId: 'c1', password: PASSWORD, file: Buffer.from(cert.certPem) }), 'certificate file is not a readable PKCS#12 (.p12/.pfx) file'],
      ['wrong password (modern)', () => ({ certificateId: 'c1', password: 'wrong', file: p12.modern! }), 'invalid PKCS#12 file or wrong password'],
      ['wrong password (legacy)', () => ({ certificateId: 'c1', password: 'wrong', file: p12.legacy! }), 'invalid PKCS#12 file or wrong password'],
      ['wrong password (3des)', () => ({ certificateId: 'c1', password: 'wrong', file: p12['3des']! }), 'invalid PKCS#12 file or wrong password'],
      ['no private key in the file', () => ({ certificateId: 'c1', password: PASSWORD, file: exportP12(cert, PASSWORD, 'modern', { noKey: true }) }), 'PKCS#12 file contains no private key'],
    ];
    it.each(cases)('%s', async (_name, form, error) => {
      const res = await upload(key, typeof form === 'function' ? form() : form);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toEqual({ error });
    });

    it('nothing was stored by the failed uploads', async () => {
      expect((await list(key)).json()).toEqual({ data: [] });
    });
  });

  it('a file of 10 MB + 1 byte → 413; exactly 10 MB is read (and refused as not PKCS#12)', async () => {
    const { key } = await t.signup();
    const big = await upload(key, { certificateId: 'big', password: PASSWORD, file: Buffer.alloc(10 * 1024 * 1024 + 1, 0x41) });
    expect(big.statusCode, big.body).toBe(413);
    expect(big.json()).toEqual({ error: 'certificate file too large (max 10 MB)' });
    const limit = await upload(key, { certificateId: 'big', password: PASSWORD, file: Buffer.alloc(10 * 1024 * 1024, 0x41) });
    expect(limit.statusCode).toBe(400);
    expect(limit.json()).toEqual({ error: 'certificate file is not a readable PKCS#12 (.p12/.pfx) file' });
  });

  it('not multipart → 415; other routes still refuse multipart', async () => {
    const { key } = await t.signup();
    const json = await t.request({ method: 'POST', url: '/v1/certificates', key, payload: { certificate_id: 'x', password: 'y' } });
    expect(json.statusCode).toBe(415);
    expect(json.json()).toEqual({ error: 'unsupported content type: send multipart/form-data' });
    const { payload, headers } = uploadForm({ certificateId: 'x', password: PASSWORD, file: p12.modern! });
    const elsewhere = await t.request({ method: 'POST', url: '/v1/locations', key, payload, headers });
    expect(elsewhere.statusCode).toBe(415);
  });

  it('a broken multipart body → 400, not a 500', async () => {
    const { key } = await t.signup();
    const { payload, headers } = uploadForm({ certificateId: 'cut', password: PASSWORD, file: p12.modern! });
    const cut = await t.request({ method: 'POST', url: '/v1/certificates', key, payload: payload.subarray(0, payload.length - 200), headers });
    expect(cut.statusCode, cut.body).toBe(400);
    expect(cut.json()).toEqual({ error: 'malformed multipart body' });
    const noBoundary = await t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers: { 'content-type': 'multipart/form-data' } });
    expect(noBoundary.statusCode, noBoundary.body).toBe(400);
    expect((await list(key)).json()).toEqual({ data: [] });
  });

  it('duplicate certificate_id in the account → 409; another account may use the same id', async () => {
    const a = await t.signup();
    const b = await t.signup();
    await uploaded(a.key, 'shared-id');
    const dup = await upload(a.key, { certificateId: 'shared-id', password: PASSWORD, file: p12['3des']! });
    expect(dup.statusCode).toBe(409);
    expect(dup.json()).toEqual({ error: 'certificate with this ID already exists' });
    await uploaded(b.key, 'shared-id');
    expect((await list(a.key)).json().data).toHaveLength(1);
  });

  it('concurrent uploads of one id: exactly one 201, the others 409', async () => {
    const { key } = await t.signup();
    const results = await Promise.all([1, 2, 3, 4].map(() => upload(key, { certificateId: 'race', password: PASSWORD, file: p12.modern! })));
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409]);
    expect((await list(key)).json().data).toHaveLength(1);
  });

  it('permissions: certificates:write to upload and delete, certificates:read to list → else 403', async () => {
    const { key } = await t.signup();
    const readOnly = await restrictedKey(key, ['certificates:read']);
    const writeOnly = await restrictedKey(key, ['certificates:write']);
    const none = await restrictedKey(key, ['locations:read']);
    for (const k of [readOnly, none]) {
      const res = await upload(k, { certificateId: 'p', password: PASSWORD, file: p12.modern! });
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ error: 'insufficient permission: certificates:write required' });
    }
    await uploaded(writeOnly, 'p');
    expect((await list(none)).statusCode).toBe(403);
    expect((await list(writeOnly)).json()).toEqual({ error: 'insufficient permission: certificates:read required' });
    expect((await list(readOnly)).json().data).toHaveLength(1);
    expect((await del(readOnly, 'p')).statusCode).toBe(403);
    expect((await del(writeOnly, 'p')).statusCode).toBe(204);
  });

  it('without a key → 401', async () => {
    const { payload, headers } = uploadForm({ certificateId: 'x', password: PASSWORD, file: p12.modern! });
    expect((await t.request({ method: 'POST', url: '/v1/certificates', payload, headers })).statusCode).toBe(401);
    expect((await t.request({ method: 'GET', url: '/v1/certificates' })).statusCode).toBe(401);
  });
});

describe('at rest', () => {
  it('the row holds no private key, certificate or password in clear; the material opens only under its row', async () => {
    const { key, accountId } = await t.signup();
    const body = await uploaded(key, 'at-rest', exportP12(chained, PASSWORD));
    const { rows } = await t.db.query<{ row: string; key_material: string }>('SELECT c::text AS row, key_material FROM certificates c WHERE id = $1', [body.id]);
    expect(rows).toHaveLength(1);
    const stored = rows[0]!.row;
    const keyBody = chained.keyPem.split('\n').filter((l) => l && !l.startsWith('-----')).join('');
    for (const needle of ['PRIVATE KEY', 'BEGIN CERTIFICATE', PASSWORD, keyBody.slice(0, 40), keyBody.slice(-40)]) expect(stored).not.toContain(needle);
    expect(rows[0]!.key_material).toMatch(/^sealed:v1:/);

    // Copied into another row, the sealed material does not open (AAD binds the row id).
    const svc = createCertificateService(t.rt.deps);
    await uploaded(key, 'other');
    await t.db.query("UPDATE certificates SET key_material = $1 WHERE account_id = $2 AND certificate_id = 'other'", [rows[0]!.key_material, accountId]);
    await expect(svc.loadSigningMaterial(accountId, 'other')).rejects.toThrow();
  });
});

describe('loadSigningMaterial', () => {
  it.each(['modern', 'legacy', '3des'] as const)('%s: round trip gives the key, certificate and chain that were exported', async (kind) => {
    const { key, accountId } = await t.signup();
    await uploaded(key, 'sign', exportP12(chained, PASSWORD, kind));
    const svc = createCertificateService(t.rt.deps);
    const m = await svc.loadSigningMaterial(accountId, 'sign');
    expect(m.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    // Same key: equal public keys, and what it signs verifies with the certificate.
    const priv = crypto.createPrivateKey(m.privateKeyPem);
    expect(crypto.createPublicKey(priv).export({ type: 'spki', format: 'pem' })).toEqual(crypto.createPublicKey(chained.keyPem).export({ type: 'spki', format: 'pem' }));
    const sig = crypto.sign('sha256', Buffer.from('factura'), priv);
    expect(crypto.verify('sha256', Buffer.from('factura'), new crypto.X509Certificate(m.certificatePem).publicKey, sig)).toBe(true);
    expect(new crypto.X509Certificate(m.certificatePem).fingerprint256).toBe(new crypto.X509Certificate(chained.certPem).fingerprint256);
    expect(m.chainPem).toHaveLength(1);
    expect(new crypto.X509Certificate(m.chainPem[0]!).fingerprint256).toBe(new crypto.X509Certificate(chained.caPem!).fingerprint256);
    expect(new crypto.X509Certificate(m.certificatePem).checkIssued(new crypto.X509Certificate(m.chainPem[0]!))).toBe(true);
  });

  it('another account\'s certificate or an unknown id → certificate not found', async () => {
    const a = await t.signup();
    const b = await t.signup();
    await uploaded(a.key, 'mine');
    const svc = createCertificateService(t.rt.deps);
    await expect(svc.loadSigningMaterial(b.accountId, 'mine')).rejects.toMatchObject({ status: 404, message: 'certificate not found' });
    await expect(svc.loadSigningMaterial(a.accountId, 'nope')).rejects.toMatchObject({ status: 404 });
  });
});

describe('GET and DELETE', () => {
  it('list is {data} only, newest first; delete → 204, then 404; the id can be reused', async () => {
    const { key } = await t.signup();
    const first = await uploaded(key, 'first');
    await new Promise((r) => setTimeout(r, 5));
    const second = await uploaded(key, 'second');
    const res = await list(key);
    expect(Object.keys(res.json())).toEqual(['data']);
    expect(res.json().data.map((c: { certificate_id: string }) => c.certificate_id)).toEqual(['second', 'first']);
    expect(res.json().data[0]).toEqual(second);
    expect(JSON.stringify(res.json())).not.toMatch(/PRIVATE KEY|key_material|BEGIN CERTIFICATE/);

    const gone = await del(key, 'first');
    expect(gone.statusCode).toBe(204);
    expect(gone.body).toBe('');
    const again = await del(key, 'first');
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ error: 'certificate not found' });
    expect((await list(key)).json().data.map((c: { id: string }) => c.id)).toEqual([second.id]);
    expect((await uploaded(key, 'first')).id).not.toBe(first.id);
  });

  it('another account\'s certificate → 404 like an unknown one, and it stays', async () => {
    const a = await t.signup();
    const b = await t.signup();
    await uploaded(a.key, 'a-cert');
    for (const id of ['a-cert', 'unknown', RANDOM_UUID]) {
      const res = await del(b.key, id);
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'certificate not found' });
    }
    expect((await list(a.key)).json().data).toHaveLength(1);
    expect((await list(b.key)).json()).toEqual({ data: [] });
  });
});

describe('locations show cert_expiry of the certificate they reference', () => {
  const getLoc = async (key: string, id: string) => (await t.request({ method: 'GET', url: `/v1/locations/${id}`, key })).json();
  const createLoc = async (key: string, body: unknown) => {
    const res = await t.request({ method: 'POST', url: '/v1/locations', key, payload: body as object });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };

  it('certificate_id (Spain) and seal_certificate_id (Italy DC), whichever comes first; cleared on delete', async () => {
    const { key } = await t.signup();
    const other = await t.signup();
    // Location first, certificate after.
    const es = await createLoc(key, locationBodies['es-verifactu']); // certificate_id cert_1
    const dc = await createLoc(key, locationBodies['it-dc']); // seal_certificate_id seal_1
    const fr = await createLoc(key, locationBodies['fr-nf525']);
    const foreign = await createLoc(other.key, locationBodies['es-sii']); // cert_1 too, another account
    expect((await getLoc(key, es.id)).cert_expiry).toBeNull();

    const c1 = await uploaded(key, 'cert_1');
    const seal = await uploaded(key, 'seal_1', exportP12(chained, PASSWORD));
    expect((await getLoc(key, es.id)).cert_expiry).toBe(c1.not_after);
    expect((await getLoc(key, dc.id)).cert_expiry).toBe(seal.not_after);
    expect((await getLoc(key, fr.id)).cert_expiry).toBeNull();
    expect((await getLoc(other.key, foreign.id)).cert_expiry).toBeNull();

    // Certificate first, location after (read back), and in the list.
    const later = await createLoc(key, locationBodies['es-ticketbai']);
    expect(later.cert_expiry).toBe(c1.not_after); // the create answer too
    expect((await getLoc(key, later.id)).cert_expiry).toBe(c1.not_after);
    const listed = (await t.request({ method: 'GET', url: '/v1/locations', key })).json().data;
    expect(listed.find((l: { id: string }) => l.id === es.id).cert_expiry).toBe(c1.not_after);

    // PATCH to another certificate, then to none.
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${es.id}`, key, payload: { country_config: { ...configs.verifactu, certificate_id: 'seal_1' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().cert_expiry).toBe(seal.not_after);
    const unknown = await t.request({ method: 'PATCH', url: `/v1/locations/${es.id}`, key, payload: { country_config: { ...configs.verifactu, certificate_id: 'not_uploaded' } } });
    expect(unknown.json().cert_expiry).toBeNull();

    // Deleting the certificate clears it.
    expect((await del(key, 'cert_1')).statusCode).toBe(204);
    expect((await getLoc(key, later.id)).cert_expiry).toBeNull();
    expect((await getLoc(key, dc.id)).cert_expiry).toBe(seal.not_after);
  });
});

describe('NIF of the certificate vs tax_id of the location', () => {
  it('warns on upload and on location create/PATCH when they differ; no warning when they match', async () => {
    const { key } = await t.signup();
    // The location names certificate `cert_1` and has tax_id B12345674; the certificate is for 12345678Z.
    const before = await t.request({ method: 'POST', url: '/v1/locations', key, payload: locationBodies['es-verifactu'] });
    expect(before.statusCode).toBe(201);
    expect(before.json().warnings).toBeUndefined(); // no such certificate yet

    const up = await upload(key, { certificateId: 'cert_1', password: PASSWORD, file: p12.modern! });
    expect(up.statusCode).toBe(201);
    expect(up.json().warnings).toEqual([`certificate NIF 12345678Z differs from tax_id B12345674 of location ${before.json().id} (${locationBodies['es-verifactu'].name})`]);

    const after = await t.request({ method: 'POST', url: '/v1/locations', key, payload: locationBodies['es-verifactu'] });
    expect(after.json().warnings).toEqual(['certificate NIF 12345678Z differs from tax_id B12345674 of this location']);
    const patched = await t.request({ method: 'PATCH', url: `/v1/locations/${after.json().id}`, key, payload: { name: 'renamed' } });
    expect(patched.json().warnings).toEqual(['certificate NIF 12345678Z differs from tax_id B12345674 of this location']);

    // A location whose tax_id is the certificate's NIF gets none.
    const own = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...locationBodies['es-verifactu'], tax_id: '12345678Z' } });
    expect(own.statusCode, own.body).toBe(201);
    expect(own.json().warnings).toBeUndefined();
  });
});

describe('what a PKCS#12 may hold (audit)', () => {
  const fingerprint = (pem: string) => new crypto.X509Certificate(pem).fingerprint256;
  const material = async (key: string, accountId: string, certificateId: string, file: Buffer, password = PASSWORD) => {
    const res = await upload(key, { certificateId, password, file });
    expect(res.statusCode, res.body).toBe(201);
    return createCertificateService(t.rt.deps).loadSigningMaterial(accountId, certificateId);
  };

  it('a file "without a password" (MAC keyed with no password bytes): an empty password opens it, another does not', async () => {
    const { key } = await t.signup();
    const file = forgeP12([{ keyPem: cert.keyPem, certPems: [cert.certPem] }], null);
    const wrong = await upload(key, { certificateId: 'nopw', password: 'x', file });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toEqual({ error: 'invalid PKCS#12 file or wrong password' });
    const res = await upload(key, { certificateId: 'nopw', password: '', file });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ subject_cn: 'Test Signer', nif: '12345678Z' });
    // The empty password with its terminator (openssl `-passout pass:`) still opens its files; the field stays required.
    expect((await upload(key, { certificateId: 'emptypw', password: '', file: forgeP12([{ keyPem: cert.keyPem, certPems: [cert.certPem] }], '') })).statusCode).toBe(201);
    const missing = await upload(key, { certificateId: 'nopw2', file });
    expect(missing.json()).toEqual({ error: 'password is required' });
  });

  it('a chain with an intermediate: kept leaf-upwards (intermediate, then root) whatever the file order', async () => {
    const { key, accountId } = await t.signup();
    const c = generateChainCert();
    const m = await material(key, accountId, 'chain', exportP12With(c, PASSWORD, [c.rootPem, c.caPem!]));
    expect(fingerprint(m.certificatePem)).toBe(fingerprint(c.certPem));
    expect(m.chainPem.map(fingerprint)).toEqual([fingerprint(c.caPem!), fingerprint(c.rootPem)]);
  });

  it('certificates off the leaf\'s path (another holder\'s, a foreign CA) are not kept as its chain', async () => {
    const { key, accountId } = await t.signup();
    const c = generateChainCert();
    const stranger = generateCert({ subject: '/CN=Someone Else' });
    const m = await material(key, accountId, 'strays', exportP12With(c, PASSWORD, [stranger.certPem, chained.caPem!, c.caPem!]));
    expect(m.chainPem.map(fingerprint)).toEqual([fingerprint(c.caPem!)]);
    // The same with forge's file order (certificate bags before the key's) and a self-signed leaf: no chain.
    const own = await material(key, accountId, 'self', forgeP12([{ keyPem: cert.keyPem, certPems: [stranger.certPem, cert.certPem] }], PASSWORD));
    expect(fingerprint(own.certificatePem)).toBe(fingerprint(cert.certPem));
    expect(own.chainPem).toEqual([]);
  });

  it('two certificates with their keys in one file → 400 (which one signs cannot be guessed); a key of no certificate → 400', async () => {
    const { key } = await t.signup();
    const other = generateCert({ subject: '/C=ES/serialNumber=IDCES-87654321X/CN=Other Signer' });
    const two = forgeP12([{ keyPem: cert.keyPem, certPems: [cert.certPem] }, { keyPem: other.keyPem, certPems: [other.certPem] }], PASSWORD);
    const res = await upload(key, { certificateId: 'two', password: PASSWORD, file: two });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error: 'PKCS#12 file contains several certificates with their private keys: upload each under its own certificate_id' });
    const mismatch = await upload(key, { certificateId: 'mm', password: PASSWORD, file: forgeP12([{ keyPem: other.keyPem, certPems: [cert.certPem] }], PASSWORD) });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json()).toEqual({ error: 'PKCS#12 file contains no certificate for its private key' });
    // One identity whose key sits in the file twice is still one identity.
    const { payload } = { payload: forgeP12([{ keyPem: cert.keyPem, certPems: [cert.certPem] }, { keyPem: cert.keyPem, certPems: [cert.certPem] }], PASSWORD) };
    expect((await upload(key, { certificateId: 'twice', password: PASSWORD, file: payload })).statusCode).toBe(201);
    expect((await list(key)).json().data.map((c: { certificate_id: string }) => c.certificate_id)).toEqual(['twice']);
  });
});

describe('the multipart form (audit)', () => {
  const post = (key: string, parts: Parameters<typeof multipartBody>[0]) => {
    const { payload, headers } = multipartBody(parts);
    return t.request({ method: 'POST', url: '/v1/certificates', key, payload, headers });
  };
  const file = () => ({ name: 'certificate', filename: 'c.p12', data: p12.modern! });

  it('parts in any order; a file part with an empty filename is still the file', async () => {
    const { key } = await t.signup();
    const first = await post(key, [file(), { name: 'password', value: PASSWORD }, { name: 'certificate_id', value: 'file-first' }]);
    expect(first.statusCode, first.body).toBe(201);
    const unnamed = await post(key, [{ name: 'certificate_id', value: 'empty-name' }, { ...file(), filename: '' }, { name: 'password', value: PASSWORD }]);
    expect(unnamed.statusCode, unnamed.body).toBe(201);
  });

  const cases: Array<[string, () => Parameters<typeof multipartBody>[0], string]> = [
    ['certificate_id twice', () => [{ name: 'certificate_id', value: 'a' }, { name: 'certificate_id', value: 'b' }, { name: 'password', value: PASSWORD }, file()], 'certificate_id must be sent once'],
    ['password twice', () => [{ name: 'certificate_id', value: 'a' }, { name: 'password', value: PASSWORD }, { name: 'password', value: 'other' }, file()], 'password must be sent once'],
    ['certificate twice', () => [{ name: 'certificate_id', value: 'a' }, { name: 'password', value: PASSWORD }, file(), file()], 'certificate must be sent once'],
    ['certificate as a text field (no filename)', () => [{ name: 'certificate_id', value: 'a' }, { name: 'password', value: PASSWORD }, { name: 'certificate', value: 'MIIKxAIBAzCCCn...' }], 'certificate must be sent as a file (a form part with a filename)'],
    ['password as a file', () => [{ name: 'certificate_id', value: 'a' }, { name: 'password', filename: 'pw.txt', data: Buffer.from(PASSWORD) }, file()], 'password must be a text field, not a file'],
    ['certificate_id as a file', () => [{ name: 'certificate_id', filename: 'id.txt', data: Buffer.from('a') }, { name: 'password', value: PASSWORD }, file()], 'certificate_id must be a text field, not a file'],
  ];
  it.each(cases)('%s → 400 naming it, nothing stored', async (_name, parts, error) => {
    const { key } = await t.signup();
    const res = await post(key, parts());
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toEqual({ error });
    expect((await list(key)).json()).toEqual({ data: [] });
  });

  it('other parts are ignored; any body that is not multipart/form-data → 415', async () => {
    const { key } = await t.signup();
    const extra = await post(key, [{ name: 'note', value: 'x' }, { name: 'certificate_id', value: 'extra' }, { name: 'attachment', filename: 'x.bin', data: Buffer.from('x') }, { name: 'password', value: PASSWORD }, file()]);
    expect(extra.statusCode, extra.body).toBe(201);
    for (const type of ['application/x-pkcs12', 'application/octet-stream', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/mixed; boundary=x']) {
      const res = await t.request({ method: 'POST', url: '/v1/certificates', key, payload: p12.modern!, headers: { 'content-type': type } });
      expect(res.statusCode, type).toBe(415);
      expect(res.json()).toEqual({ error: 'unsupported content type: send multipart/form-data' });
    }
    expect((await t.request({ method: 'POST', url: '/v1/certificates', key })).statusCode).toBe(415);
  });
});

describe('records of a location whose certificate is replaced or deleted (audit)', () => {
  const x509s = (xml: string) => [...xml.matchAll(/<ds:X509Certificate>([^<]*)<\/ds:X509Certificate>/g)].map((m) => new crypto.X509Certificate(Buffer.from(m[1]!.replace(/\s+/g, ''), 'base64')).fingerprint256);
  const fp = (pem: string) => new crypto.X509Certificate(pem).fingerprint256;
  async function record(key: string, loc: string, headers: Record<string, string> = {}) {
    const res = await createTx(t, key, saleBody(loc), headers);
    if (res.statusCode !== 201) return { status: res.statusCode, body: res.json(), certs: [] as string[] };
    const rec = await t.request({ method: 'GET', url: `/v1/transactions/${res.json().id}/fiscal-record`, key });
    expect(rec.statusCode, rec.body).toBe(200);
    return { status: 201, body: res.json(), certs: x509s(rec.body) };
  }

  it('the next record carries the replacement at once, only the leaf\'s path; once deleted, a test record falls back to the sandbox certificate', async () => {
    const { key } = await t.signup();
    const created = await t.request({ method: 'POST', url: '/v1/locations', key, payload: { ...locationBodies['es-ticketbai'], country_config: { ...configs.ticketbai, certificate_id: 'tbai' } } });
    expect(created.statusCode, created.body).toBe(201);
    const loc = created.json().id as string;

    // A file with the leaf, its intermediate, its root and a stranger's certificate.
    const c = generateChainCert();
    const stranger = generateCert({ subject: '/CN=Someone Else' });
    expect((await upload(key, { certificateId: 'tbai', password: PASSWORD, file: exportP12With(c, PASSWORD, [stranger.certPem, c.rootPem, c.caPem!]) })).statusCode).toBe(201);
    const first = await record(key, loc);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.certs).toEqual([fp(c.certPem), fp(c.caPem!), fp(c.rootPem)]);

    // Replaced under the same id: used by the very next record.
    expect((await del(key, 'tbai')).statusCode).toBe(204);
    expect((await upload(key, { certificateId: 'tbai', password: PASSWORD, file: p12.modern! })).statusCode).toBe(201);
    expect((await record(key, loc)).certs).toEqual([fp(cert.certPem)]);

    // Deleted: test keys still work (the sandbox certificate), the real authority sandbox is a clear 400.
    expect((await del(key, 'tbai')).statusCode).toBe(204);
    const fallback = await record(key, loc);
    expect(fallback.status).toBe(201);
    expect(fallback.certs).toHaveLength(1);
    expect(fallback.certs[0]).not.toBe(fp(cert.certPem));
    const authority = await record(key, loc, { 'x-svc-sandbox': 'authority' });
    expect(authority).toMatchObject({ status: 400, body: { error: 'certificate not found' } });
  });

  it('another account\'s certificate of the same id is never used by my location', async () => {
    const mine = await t.signup();
    const theirs = await t.signup();
    expect((await upload(theirs.key, { certificateId: 'tbai', password: PASSWORD, file: p12.modern! })).statusCode).toBe(201);
    const created = await t.request({ method: 'POST', url: '/v1/locations', key: mine.key, payload: { ...locationBodies['es-ticketbai'], country_config: { ...configs.ticketbai, certificate_id: 'tbai' } } });
    expect(created.json().cert_expiry).toBeNull();
    const sandboxed = await record(mine.key, created.json().id);
    expect(sandboxed.status).toBe(201);
    expect(sandboxed.certs).not.toContain(fp(cert.certPem));
    expect(await record(mine.key, created.json().id, { 'x-svc-sandbox': 'authority' })).toMatchObject({ status: 400, body: { error: 'certificate not found' } });
  });
});
