import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDevice, HAVE_SOFTHSM, type TestDevice } from '../../../test/support/softhsm.ts';
import { ConfigError, loadConfig } from '../../config.ts';
import { DEFAULT_SOFTWARE } from '../../runtime.ts';
import { openConfiguredSigningDevice, signingDeviceOptionsFromParams, withDeviceProducerKeys } from './configured.ts';
import { SigningDeviceError } from './device.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cfg-hsm-'));
const ROOT = path.resolve(import.meta.dirname, '../../..');
/** A readable producer key file (the file setting is read before the device settings). */
function keyFile(): string {
  const file = path.join(tmp(), 'producer.pem');
  fs.writeFileSync(file, crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ format: 'pem', type: 'pkcs8' }));
  return file;
}

const configError = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('SIGNING_DEVICE settings (config.ts)', () => {
  const base = { DATA_DIR: tmp() };
  it('off by default; PKCS11_* settings without SIGNING_DEVICE=pkcs11 are refused', () => {
    expect(loadConfig(base).signingDevice).toBeUndefined();
    // PKCS11_MODULE alone is other tools' setting too.
    expect(loadConfig({ ...base, PKCS11_MODULE: '/x.so' }).signingDevice).toBeUndefined();
    expect(configError(() => loadConfig({ ...base, PKCS11_PIN: '1234' }))).toBe('PKCS11_PIN is set but SIGNING_DEVICE is not pkcs11 (set SIGNING_DEVICE=pkcs11 to sign with the token)');
    expect(configError(() => loadConfig({ ...base, SIGNING_DEVICE: 'tpm' }))).toBe('SIGNING_DEVICE must be none or pkcs11 (got "tpm")');
  });

  it('pkcs11: token label, PIN and at least one key label are required; a producer key lives in one place', () => {
    const on = { ...base, SIGNING_DEVICE: 'pkcs11' };
    expect(configError(() => loadConfig({ ...on, PKCS11_PIN: '1', PKCS11_KEY_RECORDS: 'r' }))).toBe('PKCS11_TOKEN_LABEL is required when SIGNING_DEVICE is pkcs11');
    expect(configError(() => loadConfig({ ...on, PKCS11_TOKEN_LABEL: 't', PKCS11_KEY_RECORDS: 'r' }))).toBe('PKCS11_PIN is required when SIGNING_DEVICE is pkcs11');
    expect(configError(() => loadConfig({ ...on, PKCS11_TOKEN_LABEL: 't', PKCS11_PIN: '1' }))).toMatch(/^SIGNING_DEVICE=pkcs11 needs at least one key label/);
    // A misspelt name is refused, not ignored (the purpose would stay in process silently).
    for (const name of ['PKCS11_KEY_RECORD', 'PKCS11_KEY_PRODUCER_pt', 'PKCS11_KEY_PRODUCER_PRT', 'PKCS11_TOKEN']) {
      expect(configError(() => loadConfig({ ...on, PKCS11_TOKEN_LABEL: 't', PKCS11_PIN: '1', PKCS11_KEY_CERTIFICATE: 'c', [name]: 'records' }))).toMatch(
        new RegExp(`^${name} is not a setting of SIGNING_DEVICE=pkcs11 \\(known: PKCS11_MODULE, `),
      );
    }
    expect(configError(() => loadConfig({ ...on, PKCS11_TOKEN_LABEL: 't', PKCS11_PIN: '1', PKCS11_KEY_PRODUCER_PT: 'p', PT_SOFTWARE_KEY_FILE: keyFile() }))).toMatch(
      /^PKCS11_KEY_PRODUCER_PT and PT_SOFTWARE_KEY_FILE are both set/,
    );
    expect(configError(() => loadConfig({ ...on, PKCS11_TOKEN_LABEL: 't', PKCS11_PIN: '1', PKCS11_KEY_PRODUCER_PT: 'p', PT_SOFTWARE_KEY_VERSION: 'x' }))).toMatch(/^PT_SOFTWARE_KEY_VERSION must be a positive integer/);
    expect(
      loadConfig({ ...on, PKCS11_TOKEN_LABEL: 'fiscal', PKCS11_PIN: '1234', PKCS11_KEY_RECORDS: 'records', PKCS11_KEY_CERTIFICATE: 'tbai', PKCS11_KEY_PRODUCER_PT: 'pt', PT_SOFTWARE_KEY_VERSION: '3' }).signingDevice,
    ).toEqual({
      module: '/usr/lib/softhsm/libsofthsm2.so', tokenLabel: 'fiscal', pin: '1234',
      keys: { records: 'records', certificate: 'tbai', producer: { PT: 'pt' } }, producerInfo: { PT: { version: '3' } },
    });
  });
});

describe.skipIf(!HAVE_SOFTHSM)('opening the configured device (SoftHSM2)', () => {
  let t: TestDevice;
  let env: Record<string, string>;
  beforeAll(() => {
    t = createTestDevice();
    env = {
      DATA_DIR: tmp(), SIGNING_DEVICE: 'pkcs11', PKCS11_MODULE: t.module, PKCS11_TOKEN_LABEL: t.tokenLabel, PKCS11_PIN: t.pin,
      PKCS11_KEY_RECORDS: 'records', PKCS11_KEY_CERTIFICATE: 'tbai', PKCS11_KEY_PRODUCER_PT: 'producer-pt', PT_SOFTWARE_KEY_VERSION: '2',
    };
  });
  afterAll(() => t?.hsm.cleanup());

  it('the start-up command stops on a wrong PIN, naming PKCS11_PIN (exit 78)', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
      cwd: ROOT, encoding: 'utf8', timeout: 60_000,
      env: { PATH: process.env.PATH ?? '', SOFTHSM2_CONF: t.hsm.conf, ...env, PKCS11_PIN: '000000', PORT: '0' },
    });
    expect(r.stderr).toContain(`configuration error: PKCS11_PIN: the token "${t.tokenLabel}" refused the PIN (CKR_PIN_INCORRECT)`);
    expect(r.status).toBe(78);
  }, 60_000);

  it('a missing token or key label: a ConfigError naming the setting; the good settings open it', () => {
    const open = (over: Record<string, string>) => () => openConfiguredSigningDevice(loadConfig({ ...env, ...over }).signingDevice);
    expect(configError(open({ PKCS11_TOKEN_LABEL: 'other' }))).toBe(`PKCS11_TOKEN_LABEL: no token labelled "other" in ${t.module} (tokens present: "${t.tokenLabel}")`);
    expect(configError(open({ PKCS11_KEY_RECORDS: 'nope' }))).toBe(`PKCS11_KEY_RECORDS: no private key labelled "nope" in the token "${t.tokenLabel}"`);
    expect(configError(open({ PKCS11_KEY_PRODUCER_PT: 'gone' }))).toMatch(/^PKCS11_KEY_PRODUCER_PT: no private key labelled "gone"/);
    expect(configError(open({ PKCS11_MODULE: '/nonexistent/lib.so' }))).toMatch(/^PKCS11_MODULE: cannot load the PKCS#11 library \/nonexistent\/lib.so/);
    const config = loadConfig(env);
    const device = openConfiguredSigningDevice(config.signingDevice)!;
    try {
      expect(device.description).toContain(`token "${t.tokenLabel}"`);
      // The producer key of the software identity is the token's, with its configured version.
      const software = withDeviceProducerKeys(DEFAULT_SOFTWARE, device, config.signingDevice!.producerInfo);
      expect(software.producerKeys?.PT).toMatchObject({ version: '2', signer: device.producer.PT });
      expect(software.producerKeys?.PT?.privateKey).toBeUndefined();
    } finally {
      device.close();
    }
  });
});

describe("the engine's signing_device param", () => {
  const field = (p: unknown): string => {
    try {
      signingDeviceOptionsFromParams(p);
    } catch (err) {
      if (err instanceof SigningDeviceError) return err.field;
      throw err;
    }
    return 'none';
  };
  it('maps to device options; a malformed field is named', () => {
    expect(signingDeviceOptionsFromParams({ token_label: 'fiscal', pin: '1234', keys: { records: 'r', producer: { PT: 'p' } } })).toEqual({
      module: undefined, tokenLabel: 'fiscal', pin: '1234', keys: { records: 'r', certificate: undefined, producer: { PT: 'p' } },
    });
    expect(field(null)).toBe('device');
    expect(field({ pin: '1', keys: {} })).toBe('token_label');
    expect(field({ token_label: 't', keys: {} })).toBe('pin');
    expect(field({ token_label: 't', pin: '1' })).toBe('keys');
    expect(field({ token_label: 't', pin: '1', keys: { records: 3 } })).toBe('keys.records');
    expect(field({ token_label: 't', pin: '1', keys: { producer: { pt: 'x' } } })).toBe('keys.producer.pt');
  });
});
