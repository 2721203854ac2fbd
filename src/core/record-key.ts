import type { KeyObject } from 'node:crypto';
import type { Signer } from '../signing/signer.ts';

/**
 * The kinds of record-signing key the service keeps for a location (no certificate):
 * `ec-p256`, an ECDSA key on NIST P-256 (secp256r1 / prime256v1), signing with SHA-256.
 */
export type RecordKeyKind = 'ec-p256';

/** A record key held in this process (parsed from its PEM). */
export type InProcessRecordKey = RecordKey & { privateKey: KeyObject };

/**
 * A location's record-signing key, unsealed (never leaves the process): a key the service
 * generated for the location on first use and keeps sealed with MASTER_KEY, for systems
 * whose records are signed by the installation rather than with an X.509 certificate
 * (`capabilities.recordKey`). One per location and kind, never replaced: every record of
 * the location's chains verifies with its public key.
 */
export interface RecordKey {
  kind: RecordKeyKind;
  /** Names the key in the records it signs: lowercase hex SHA-256 of the public key's DER SubjectPublicKeyInfo. */
  keyId: string;
  /** Signs with the key: in process, or in the PKCS#11 token (HardwareDevice mode), where no private key is in process. */
  signer: Signer;
  /** The private key, when it is held in this process (absent for a device key). */
  privateKey?: KeyObject | undefined;
  publicKey: KeyObject;
  /** The public key as SPKI PEM, what a verifier is given. */
  publicKeyPem: string;
}
