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
