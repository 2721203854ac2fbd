import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { saft } from './index.ts';
import { draft, fixedSigningKey, location, validatedBuild } from '../shared/test-fixtures.ts';
import { expect400 } from '../shared/test-helpers.ts';
import { goldenProducerKey } from './golden-cases.ts';
import { CONFIGURED_KEY_SIZE_ERROR, LIVE_NEEDS_PRODUCER_KEY, documentHashMessage, producerKey } from './signature.ts';
import { SANDBOX_PRODUCER_PUBLIC_KEY_PEM } from './sandbox-key.ts';
import { opensslVerifyHash } from './test-tools.ts';
import type { SoftwareIdentity } from '../types.ts';
import { buildSaftFile } from './saft-file.ts';

/*
 * The SAF-T PT signing key is the certified program's (docs/decisions.md "Portugal: the
 * software producer key"): the location's at_certificate_id, else on live keys the
 * service's PT_SOFTWARE_KEY_FILE (HashControl = PT_SOFTWARE_KEY_VERSION), on test keys the
 * sandbox key; live without either is refused. Every Hash is checked with openssl.
 */

const tag = (xml: string, name: string) => new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1];
const rsa = (bits: number) => crypto.generateKeyPairSync('rsa', { modulusLength: bits });
const configured = rsa(1024);
const configuredPublicPem = configured.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const software = (over: Partial<NonNullable<SoftwareIdentity['producerKeys']>[string]> = {}): SoftwareIdentity => ({
  name: 'Fiscalization API',
  version: '1.0.0',
  vendorTaxId: '500000000',
  producerKeys: { PT: { privateKey: configured.privateKey, version: '3', certificateNumber: '2468', ...over } },
});
const sandboxCertificate = () => ({ ...fixedSigningKey(), source: 'sandbox' as const });

describe('pt-saft: the software producer key by setting', () => {
  const loc = location('pt-saft');
  // What the location's stored config says once it names no certificate number of its own.
  const { software_certificate_number: _omit, ...bareConfig } = loc.config as Record<string, unknown>;
  const bare = { ...loc, config: bareConfig };

  it('a configured key signs live documents, HashControl is its version, openssl verifies with its public key', () => {
    for (const environment of ['live'] as const) {
      const { record } = validatedBuild(saft, bare, draft(), { environment, software: software(), signingKey: undefined });
      expect(tag(record.body, 'HashControl')).toBe('3');
      const verified = opensslVerifyHash(documentHashMessage(record.body, null), record.fingerprint!, configuredPublicPem);
      expect(verified.ok, verified.output).toBe(true);
      // Not the sandbox key.
      expect(opensslVerifyHash(documentHashMessage(record.body, null), record.fingerprint!, SANDBOX_PRODUCER_PUBLIC_KEY_PEM).ok).toBe(false);
      // The configured certificate number is printed, in QR field R and after the 4 characters.
      expect(record.qrData).toContain('*R:2468');
      expect(record.renderHints.find((h) => h.key === 'software_certificate')?.value).toMatch(/^.{4}-Processado por programa certificado n\.º 2468\/AT$/);
    }
  });

  it('test documents are never signed with the configured key: the sandbox key signs them', () => {
    const { record } = validatedBuild(saft, bare, draft(), { environment: 'test', software: software(), signingKey: sandboxCertificate() });
    expect(tag(record.body, 'HashControl')).toBe('1');
    expect(opensslVerifyHash(documentHashMessage(record.body, null), record.fingerprint!, SANDBOX_PRODUCER_PUBLIC_KEY_PEM).ok).toBe(true);
    expect(opensslVerifyHash(documentHashMessage(record.body, null), record.fingerprint!, configuredPublicPem).ok).toBe(false);
  });

  it("the location's at_certificate_id (an uploaded RSA-1024 key) comes first, with HashControl 1", () => {
    const uploaded = goldenProducerKey();
    const { record } = validatedBuild(saft, bare, draft(), { environment: 'live', software: software(), signingKey: uploaded });
    expect(tag(record.body, 'HashControl')).toBe('1');
    const publicPem = uploaded.certificate.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(opensslVerifyHash(documentHashMessage(record.body, null), record.fingerprint!, publicPem).ok).toBe(true);
    expect(opensslVerifyHash(documentHashMessage(record.body, null), record.fingerprint!, configuredPublicPem).ok).toBe(false);
  });

  it("the location's software_certificate_number overrides the configured one", () => {
    const withNumber = { ...loc, config: { ...bareConfig, software_certificate_number: '1357' } };
    const { record } = validatedBuild(saft, withNumber, draft(), { environment: 'live', software: software(), signingKey: undefined });
    expect(record.qrData).toContain('*R:1357');
    expect(record.renderHints.find((h) => h.key === 'software_certificate')?.value).toContain('n.º 1357/AT');
    // Neither: R is 0 and no certified-program line yet.
    const none = validatedBuild(saft, bare, draft(), { environment: 'live', software: software({ certificateNumber: undefined }), signingKey: undefined }).record;
    expect(none.qrData).toContain('*R:0');
    expect(none.renderHints.some((h) => h.key === 'software_certificate')).toBe(false);
  });

  it('live without a configured key or at_certificate_id is refused (400), never signed with the sandbox key', () => {
    const noKeys: SoftwareIdentity = { name: 'x', version: '1', vendorTaxId: 'x' };
    expect400(() => validatedBuild(saft, bare, draft(), { environment: 'live', software: noKeys, signingKey: undefined }), LIVE_NEEDS_PRODUCER_KEY);
    // Even if a sandbox certificate were handed over in live.
    expect400(() => producerKey({ environment: 'live', software: noKeys, signingKey: sandboxCertificate() }), LIVE_NEEDS_PRODUCER_KEY);
    // Test keys without one: the published sandbox key.
    expect(producerKey({ environment: 'test', software: noKeys, signingKey: undefined }).source).toBe('sandbox');
  });

  it('a configured key that is not RSA-1024 is refused', () => {
    const big = rsa(2048);
    expect400(
      () => validatedBuild(saft, bare, draft(), { environment: 'live', software: { ...software(), producerKeys: { PT: { privateKey: big.privateKey, version: '1' } } }, signingKey: undefined }),
      CONFIGURED_KEY_SIZE_ERROR,
    );
  });

  it('the SAF-T header carries the configured certificate number', () => {
    const { record, tx } = validatedBuild(saft, bare, draft(), { environment: 'live', software: software(), signingKey: undefined });
    const file = buildSaftFile({ location: { ...bare, tax_id: '500000000' }, period: '2026-01', records: [{ kind: 'record', body: record.body, tx }], software: software(), createdAt: new Date('2026-02-01T10:00:00Z') });
    expect(tag(file.xml, 'SoftwareCertificateNumber')).toBe('2468');
  });
});
