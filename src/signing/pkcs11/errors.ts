/**
 * The signing device's error, apart from the PKCS#11 binding (device.ts), so that the HTTP
 * error handler can recognise it without loading the native addon.
 */

/** The option a device error is about: `module`, `token_label`, `pin`, `keys.records`, `keys.certificate`, `keys.producer.PT`, or `device` (at signing time). */
export type SigningDeviceField = 'module' | 'token_label' | 'pin' | 'keys' | 'keys.records' | 'keys.certificate' | `keys.producer.${string}` | 'device';

export class SigningDeviceError extends Error {
  constructor(
    readonly field: SigningDeviceField,
    message: string,
  ) {
    super(message);
    this.name = 'SigningDeviceError';
  }
}
