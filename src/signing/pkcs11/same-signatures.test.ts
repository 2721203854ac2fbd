import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSoftHsm, HAVE_SOFTHSM, importTokenKey, type SoftHsm } from '../../../test/support/softhsm.ts';
import { deviceRecordKey } from '../../crypto/record-key.ts';
import { ticketBai } from '../../countries/es-ticketbai/index.ts';
import { nf525 } from '../../countries/fr-nf525/index.ts';
import { verifyNf525Chain } from '../../countries/fr-nf525/verify.ts';
import { goldenProducerKey, goldenPtLocation } from '../../countries/pt-saft/golden-cases.ts';
import { saft } from '../../countries/pt-saft/index.ts';
import { draft, fixedRecordKey, fixedSigningKey, line, location, validatedBuild } from '../../countries/shared/test-fixtures.ts';
import type { SigningKey } from '../../core/signing-key.ts';
import type { Signer } from '../signer.ts';
import { openSigningDevice, type SigningDevice } from './device.ts';

/*
 * The golden keys imported into a SoftHSM2 token (sensitive, non-extractable): records
 * built through the token are the golden path's records. RSA PKCS#1 v1.5 is
 * deterministic, so SAF-T PT and TicketBAI records are byte-identical; ECDSA is not
 * (random k), so the NF525 record is checked by verification with the same public key.
 */
describe.skipIf(!HAVE_SOFTHSM)('the token signs as the in-process keys do (golden keys imported)', () => {
  let hsm: SoftHsm;
  let device: SigningDevice;
  beforeAll(() => {
    hsm = createSoftHsm();
    hsm.initToken('golden', '4321');
    importTokenKey(hsm, 'golden', '4321', { label: 'pt', privateKey: goldenProducerKey().privateKey });
    importTokenKey(hsm, 'golden', '4321', { label: 'tbai', privateKey: fixedSigningKey().privateKey });
    importTokenKey(hsm, 'golden', '4321', { label: 'records', privateKey: fixedRecordKey().privateKey });
    device = openSigningDevice({ module: hsm.module, tokenLabel: 'golden', pin: '4321', keys: { records: 'records', producer: { PT: 'pt', ES: 'tbai' } } });
  });
  afterAll(() => {
    device?.close();
    hsm?.cleanup();
  });

  /** The same certificate, its key in the token: no private key in process. */
  const inToken = (key: SigningKey, signer: Signer | undefined): SigningKey => ({
    certificate: key.certificate, chain: key.chain, certificatePem: key.certificatePem, source: key.source, signer: signer!,
  });

  it('SAF-T PT: the same document and Hash, byte for byte', () => {
    const tx = draft({ payment_method: 'cash' });
    const golden = validatedBuild(saft, goldenPtLocation(), tx, { signingKey: goldenProducerKey() });
    const token = validatedBuild(saft, goldenPtLocation(), tx, { signingKey: inToken(goldenProducerKey(), device.producer.PT) });
    expect(token.record.body).toBe(golden.record.body);
    expect(token.record.fingerprint).toBe(golden.record.fingerprint);
  });

  it('TicketBAI: the same signed XML, byte for byte', () => {
    const tx = draft();
    const golden = validatedBuild(ticketBai, location('es-ticketbai'), tx, { signingKey: fixedSigningKey() });
    const token = validatedBuild(ticketBai, location('es-ticketbai'), tx, { signingKey: inToken(fixedSigningKey(), device.producer.ES) });
    expect(token.record.body).toBe(golden.record.body);
  });

  it('NF525: the token record verifies with the golden public key (and the key id is the same)', () => {
    const key = deviceRecordKey('ec-p256', device.records!);
    expect(key.keyId).toBe(fixedRecordKey().keyId);
    // At a French rate: France refuses draft()'s 21 % (fr-nf525/rates.ts).
    const sale = draft({ items: [line({ tax_rate: 20, tax_amount: 200, total_amount: 1200 })] });
    const built = validatedBuild(nf525, location('fr-nf525'), sale, { recordKey: key });
    expect(verifyNf525Chain([built.record.body], fixedRecordKey().publicKey)).toMatchObject({ ok: true, count: 1 });
  });
});
