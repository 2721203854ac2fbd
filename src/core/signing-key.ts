import type { KeyObject, X509Certificate } from 'node:crypto';

/**
 * An issuer's signing key and certificate, unsealed (never leaves the process). Also the
 * TLS client certificate of the authority protocols (mutual TLS).
 */
export interface SigningKey {
  /** RSA private key (TicketBAI requires more than 1024 bits). */
  privateKey: KeyObject;
  /** The signer's certificate. */
  certificate: X509Certificate;
  /** Intermediate certificates, leaf's issuer first (may be empty). */
  chain: X509Certificate[];
  /** PEM forms, for TLS client authentication. */
  privateKeyPem: string;
  certificatePem: string;
  /** `uploaded`: a certificate of the account; `sandbox`: the account's generated test certificate. */
  source: 'uploaded' | 'sandbox';
}
