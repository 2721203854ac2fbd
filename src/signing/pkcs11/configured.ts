/**
 * The hosts' side of HardwareDevice mode: the device opened from the configuration
 * (config.ts `signingDevice`, SIGNING_DEVICE=pkcs11), its faults as ConfigErrors naming
 * the setting (start-up stops, exit 78), and the software identity's producer keys
 * pointed at the token.
 */
import { ConfigError, type SigningDeviceConfig } from '../../config.ts';
import type { SoftwareIdentity } from '../../countries/types.ts';
import { openSigningDevice, SigningDeviceError, type SigningDevice, type SigningDeviceField, type SigningDeviceOptions } from './device.ts';

/** The setting a device option comes from (PKCS11_*). */
export function settingOf(field: SigningDeviceField): string {
  if (field === 'module') return 'PKCS11_MODULE';
  if (field === 'token_label') return 'PKCS11_TOKEN_LABEL';
  if (field === 'pin') return 'PKCS11_PIN';
  if (field === 'keys.records') return 'PKCS11_KEY_RECORDS';
  if (field === 'keys.certificate') return 'PKCS11_KEY_CERTIFICATE';
  if (field.startsWith('keys.producer.')) return `PKCS11_KEY_PRODUCER_${field.slice('keys.producer.'.length)}`;
  if (field === 'keys') return 'PKCS11_KEY_*';
  return 'SIGNING_DEVICE';
}

export function deviceOptions(c: SigningDeviceConfig): SigningDeviceOptions {
  return { module: c.module, tokenLabel: c.tokenLabel, pin: c.pin, keys: c.keys };
}

/** Opens the configured device, or undefined when none is configured; a fault is a ConfigError naming its setting. */
export function openConfiguredSigningDevice(c: SigningDeviceConfig | undefined): SigningDevice | undefined {
  if (c === undefined) return undefined;
  try {
    return openSigningDevice(deviceOptions(c));
  } catch (err) {
    if (err instanceof SigningDeviceError) throw new ConfigError(`${settingOf(err.field)}: ${err.message}`);
    throw err;
  }
}

/**
 * The software identity with the device's producer keys (`PKCS11_KEY_PRODUCER_<CC>`) in
 * place of in-process ones, each with its version and certificate number.
 */
export function withDeviceProducerKeys(
  software: SoftwareIdentity,
  device: SigningDevice | undefined,
  info: SigningDeviceConfig['producerInfo'] = {},
): SoftwareIdentity {
  if (device === undefined || Object.keys(device.producer).length === 0) return software;
  const producerKeys = { ...(software.producerKeys ?? {}) };
  for (const [cc, signer] of Object.entries(device.producer)) {
    const i = info[cc] ?? { version: '1' };
    producerKeys[cc] = { signer, version: i.version, ...(i.certificateNumber !== undefined ? { certificateNumber: i.certificateNumber } : {}) };
  }
  return { ...software, producerKeys };
}

/**
 * The engine's `init` param `signing_device: {module?, token_label, pin, keys: {records?,
 * certificate?, producer?: {PT: label}}}` (snake case, as the envelope's params are) as
 * device options; a malformed param is a SigningDeviceError whose `field` names it (the
 * engine reports `signing_device.<field>`). Open the result with `openSigningDevice`.
 */
export function signingDeviceOptionsFromParams(p: unknown): SigningDeviceOptions {
  const obj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const str = (v: unknown): v is string => typeof v === 'string' && v !== '';
  if (!obj(p)) throw new SigningDeviceError('device', 'signing_device must be an object');
  if (p.module !== undefined && !str(p.module)) throw new SigningDeviceError('module', 'module must be the path of a PKCS#11 library');
  if (!str(p.token_label)) throw new SigningDeviceError('token_label', 'token_label is required (a string)');
  if (!str(p.pin)) throw new SigningDeviceError('pin', 'pin is required (a string)');
  if (!obj(p.keys)) throw new SigningDeviceError('keys', 'keys must be an object: {records?, certificate?, producer?}');
  const { records, certificate, producer } = p.keys;
  if (records !== undefined && !str(records)) throw new SigningDeviceError('keys.records', 'keys.records must be a key label');
  if (certificate !== undefined && !str(certificate)) throw new SigningDeviceError('keys.certificate', 'keys.certificate must be a key label');
  if (producer !== undefined && !obj(producer)) throw new SigningDeviceError('keys', 'keys.producer must map country codes to key labels');
  const labels: Record<string, string> = {};
  for (const [cc, label] of Object.entries(producer ?? {})) {
    if (!/^[A-Z]{2}$/.test(cc) || !str(label)) throw new SigningDeviceError(`keys.producer.${cc}`, `keys.producer.${cc} must be a key label, under an upper-case country code`);
    labels[cc] = label;
  }
  return { module: p.module as string | undefined, tokenLabel: p.token_label, pin: p.pin, keys: { records, certificate, producer: labels } };
}
