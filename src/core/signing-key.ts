import type { KeyObject, X509Certificate } from 'node:crypto';
import type { Signer } from '../signing/signer.ts';

/**
 * An issuer's signing key and certificate, unsealed (never leaves the process). Also the
 * TLS client certificate of the authority protocols (mutual TLS).
 */
export interface SigningKey {
  /** RSA private key (TicketBAI requires more than 1024 bits), when held in this process; absent for a device key. */
  privateKey?: KeyObject | undefined;
  /**
   * Signs with the key (signing/signer.ts): the PKCS#11 token's (HardwareDevice mode), or
   * absent: the in-process `privateKey` (signerOf).
   */
  signer?: Signer | undefined;
  /** The signer's certificate. */
  certificate: X509Certificate;
  /** Intermediate certificates, leaf's issuer first (may be empty). */
  chain: X509Certificate[];
  /** PEM forms, for TLS client authentication. */
  privateKeyPem?: string | undefined;
  certificatePem: string;
  /**
   * `uploaded`: a certificate of the account; `sandbox`: the account's generated test
   * certificate; `device`: the certificate stored in the PKCS#11 token beside its key.
   */
  source: 'uploaded' | 'sandbox' | 'device';
}

/** A signing key held in this process (parsed from PEM): what toSigningKey returns. */
export type InProcessSigningKey = SigningKey & { privateKey: KeyObject; privateKeyPem: string };
