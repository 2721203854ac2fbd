/**
 * Which key signs a record, and which certificate opens the authority's TLS door.
 *
 * - The location names an uploaded certificate (`country_config.certificate_id`): that one.
 * - Test keys with the stub authority, when the location names none or names one not
 *   uploaded: the account's sandbox certificate, generated on first use and kept
 *   sealed, so sandbox records carry a real, verifiable signature.
 * - Otherwise (live key, no certificate): 400: a live record cannot be signed.
 * The real authority sandbox (`X-Svc-Sandbox: authority`) and live submissions need an
 * uploaded certificate: the authorities do not know our sandbox certificates.
 *
 * Keys are parsed once and cached in the process: uploaded ones for CACHE_MS (a
 * certificate deleted on another node stops being used within that time; on this node at
 * once), sandbox ones for the life of the process (they never change).
 *
 * Record keys (`recordKey`, core/record-key.ts) are another thing: no certificate, a key
 * the service generates per location on first use for systems whose records the
 * installation signs (`capabilities.recordKey`), sealed with MASTER_KEY, never replaced,
 * cached for the life of the process. Test and live records of the location use the same
 * one (they share its chains).
 *
 * HardwareDevice mode (`device`, signing/pkcs11/device.ts; docs/hardware-device.md): the
 * keys of the purposes the device holds never come from the database and none is
 * generated, stored or sealed there:
 * - record keys: the device's `records` key signs for every location (a device serves
 *   the merchant's own locations); the location's `record_keys` row keeps its public key
 *   (what archives and verifiers read) with a marker instead of key material;
 * - certificate keys: the device's `certificate` key and the certificate stored beside
 *   it sign every record of the systems that sign with a certificate (no sandbox
 *   certificate is generated). The authority's TLS door (`forAuthority`) still opens
 *   with the uploaded certificate: Node's TLS cannot use a key inside a PKCS#11 token.
 */
import { toSigningKey } from '../certificates/signing-key.ts';
import { generateSandboxCertificate } from '../certificates/sandbox-certificate.ts';
import { ApiError, badRequest } from '../core/errors.ts';
import type { LocationForFiscal } from '../countries/types.ts';
import type { SigningKey } from '../core/signing-key.ts';
import { seal, unseal } from '../crypto/sealed.ts';
import { sandboxCertificatesRepo } from '../store/repos/sandbox-certificates-repo.ts';
import { recordKeysRepo } from '../store/repos/record-keys-repo.ts';
import type { RecordKey, RecordKeyKind } from '../core/record-key.ts';
import { deviceRecordKey, generateRecordKeyPem, toRecordKey } from '../crypto/record-key.ts';
import type { CertificateService } from './certificates.ts';
import type { Deps } from './deps.ts';
import type { SigningDevice } from '../signing/pkcs11/device.ts';
import { SigningDeviceError } from '../signing/pkcs11/errors.ts';

/**
 * `record_keys.key_material` of a key held by a signing device: no key material, a marker
 * (the column is NOT NULL). Never unsealed; a host without the device refuses it.
 */
export const DEVICE_KEY_MATERIAL = 'device:pkcs11';

const CACHE_MS = 60_000;
const sandboxAad = (accountId: string) => `sandbox-certificate:${accountId}`;
const recordKeyAad = (locationId: string, kind: RecordKeyKind) => `record-key:${locationId}:${kind}`;

export const SIGNING_ERRORS = {
  liveNeedsCertificate: 'country_config.certificate_id is required: live records are signed with an uploaded certificate (POST /v1/certificates)',
  authorityNeedsCertificate:
    'X-Svc-Sandbox: authority needs an uploaded certificate: upload one (POST /v1/certificates) and set country_config.certificate_id',
  certificateMissing: 'certificate not found',
} as const;

/**
 * Record keys that do not match the mode the service runs in (a misconfiguration of this
 * host): the key the location signs with is not reachable here, so the request answers as
 * for a device gone (503 with Retry-After, nothing written; the cause below is logged),
 * never a 500: another host, or this one restarted with the right token, can sign it.
 */
export const DEVICE_KEY_ERRORS = {
  deviceKeyWithoutDevice: (locationId: string) =>
    `record key of location ${locationId}: it is held by a signing device (HardwareDevice mode): start the service with SIGNING_DEVICE=pkcs11 and the same token`,
  otherKey: (locationId: string, stored: string, device: string) =>
    `record key of location ${locationId}: its records are signed with key ${stored}, not the signing device's key ${device}: a location keeps one record key for life`,
} as const;

export function createSigningKeyService(deps: Deps, certificates: Pick<CertificateService, 'loadSigningMaterial'>, device?: SigningDevice) {
  const { db, clock, keys } = deps;
  const uploaded = new Map<string, { key: SigningKey; until: number }>();
  const sandbox = new Map<string, Promise<SigningKey>>();
  /**
   * Test keys only: certificates a location names but the account has not uploaded (yet),
   * until when. Those records are signed with the sandbox certificate; without this each of
   * them read the database and built two errors first. An upload here forgets the entry at
   * once (`forget`); on another node the sandbox key may sign for up to CACHE_MS more.
   */
  const missing = new Map<string, number>();
  const MAX_MISSING = 10_000;

  /**
   * The certificate the location names through its system's `certificateFields`
   * (`certificateRef`, from the stored location); `certificate_id` for a location built
   * without it.
   */
  const certificateIdOf = (location: LocationForFiscal): string | undefined => {
    const id = location.certificateRef !== undefined ? location.certificateRef : location.config.certificate_id;
    return typeof id === 'string' && id !== '' ? id : undefined;
  };

  async function uploadedKey(accountId: string, certificateId: string): Promise<SigningKey> {
    const cacheKey = `${accountId}:${certificateId}`;
    const hit = uploaded.get(cacheKey);
    if (hit && hit.until > Date.now()) return hit.key;
    let key: SigningKey;
    try {
      key = toSigningKey(await certificates.loadSigningMaterial(accountId, certificateId), 'uploaded');
    } catch (err) {
      // The location names a certificate that is gone: a configuration error of the request's location.
      if (err instanceof ApiError && err.status === 404) throw badRequest(SIGNING_ERRORS.certificateMissing);
      throw err;
    }
    uploaded.set(cacheKey, { key, until: Date.now() + CACHE_MS });
    return key;
  }

  async function loadSandboxKey(accountId: string): Promise<SigningKey> {
    let row = await sandboxCertificatesRepo.get(db, accountId);
    if (!row) {
      const now = clock.now();
      const m = await generateSandboxCertificate(accountId, now);
      row = await db.transaction((tx) =>
        sandboxCertificatesRepo.insertOrGet(tx, {
          account_id: accountId,
          certificate_pem: m.certificatePem,
          key_material: seal(keys.seal, m.privateKeyPem, sandboxAad(accountId)),
          created_at: now,
        }),
      );
    }
    return toSigningKey({ privateKeyPem: unseal(keys.seal, row.key_material, sandboxAad(accountId)), certificatePem: row.certificate_pem, chainPem: [] }, 'sandbox');
  }

  function sandboxKey(accountId: string): Promise<SigningKey> {
    let p = sandbox.get(accountId);
    if (!p) {
      p = loadSandboxKey(accountId);
      sandbox.set(accountId, p);
      p.catch(() => sandbox.delete(accountId));
    }
    return p;
  }

  const recordKeys = new Map<string, Promise<RecordKey>>();

  /** The location's record key row, or the one a racing node stored first (insertOrGet). */
  function storeRecordKey(location: LocationForFiscal, kind: RecordKeyKind, key: Pick<RecordKey, 'keyId' | 'publicKeyPem'>, keyMaterial: string) {
    return db.transaction((tx) => recordKeysRepo.insertOrGet(tx, {
      location_id: location.id, kind, account_id: location.account_id, key_id: key.keyId,
      public_key_pem: key.publicKeyPem, key_material: keyMaterial, created_at: clock.now(),
    }));
  }

  /** The device's key for every location; its row stores the public key and the marker, never key material. */
  async function loadDeviceRecordKey(location: LocationForFiscal, kind: RecordKeyKind, signer: NonNullable<SigningDevice['records']>): Promise<RecordKey> {
    const key = deviceRecordKey(kind, signer);
    const row =
      (await recordKeysRepo.get(db, location.id, kind)) ??
      (await storeRecordKey(location, kind, key, DEVICE_KEY_MATERIAL));
    if (row.key_id !== key.keyId) throw new SigningDeviceError('device', DEVICE_KEY_ERRORS.otherKey(location.id, row.key_id, key.keyId));
    return key;
  }

  async function loadRecordKey(location: LocationForFiscal, kind: RecordKeyKind): Promise<RecordKey> {
    if (device?.records && kind === device.records.algorithm) return loadDeviceRecordKey(location, kind, device.records);
    let row = await recordKeysRepo.get(db, location.id, kind);
    if (!row) {
      const pem = await generateRecordKeyPem(kind);
      const key = toRecordKey(kind, pem);
      row = await storeRecordKey(location, kind, key, seal(keys.seal, pem, recordKeyAad(location.id, kind)));
    }
    if (row.key_material === DEVICE_KEY_MATERIAL) throw new SigningDeviceError('device', DEVICE_KEY_ERRORS.deviceKeyWithoutDevice(location.id));
    const key = toRecordKey(kind, unseal(keys.seal, row.key_material, recordKeyAad(location.id, kind)));
    // The public key verifiers are given is the one that signs (the row's clear columns match the sealed key).
    if (key.keyId !== row.key_id || key.publicKeyPem !== row.public_key_pem) throw new Error(`record key of location ${location.id}: stored public key does not match the sealed key`);
    return key;
  }

  /** The device's certificate key, when the device holds one (HardwareDevice mode). */
  const deviceKey: SigningKey | undefined = device?.certificate && {
    signer: device.certificate.signer,
    certificate: device.certificate.certificate,
    chain: [],
    certificatePem: device.certificate.certificatePem,
    source: 'device',
  };

  const service = {
    /**
     * The location's record-signing key of `kind`, generated and stored sealed on first
     * use (two nodes racing keep the first one stored).
     */
    recordKey(location: LocationForFiscal, kind: RecordKeyKind): Promise<RecordKey> {
      const cacheKey = `${location.id}:${kind}`;
      let p = recordKeys.get(cacheKey);
      if (!p) {
        p = loadRecordKey(location, kind);
        recordKeys.set(cacheKey, p);
        p.catch(() => recordKeys.delete(cacheKey));
      }
      return p;
    },

    /** The key a record of this location is signed with. */
    async forRecord(location: LocationForFiscal, environment: 'test' | 'live', mode: 'stub' | 'authority'): Promise<SigningKey> {
      // HardwareDevice mode: the token's key signs every record, test or live.
      if (deviceKey) return deviceKey;
      const certificateId = certificateIdOf(location);
      if (environment === 'test' && mode === 'stub') {
        // Spec "Sandbox": on test keys the request works without a certificate. A named
        // certificate not uploaded (yet) falls back to the sandbox one.
        const cacheKey = `${location.account_id}:${certificateId}`;
        if (certificateId && (missing.get(cacheKey) ?? 0) <= Date.now()) {
          try {
            return await uploadedKey(location.account_id, certificateId);
          } catch (err) {
            if (!(err instanceof ApiError && err.message === SIGNING_ERRORS.certificateMissing)) throw err;
            const now = Date.now();
            // Bounded: lapsed entries go once the map holds many (one per account and named certificate).
            if (missing.size >= MAX_MISSING) for (const [k, until] of missing) if (until <= now) missing.delete(k);
            if (missing.size < MAX_MISSING) missing.set(cacheKey, now + CACHE_MS);
          }
        }
        return sandboxKey(location.account_id);
      }
      if (certificateId) return uploadedKey(location.account_id, certificateId);
      throw badRequest(environment === 'live' ? SIGNING_ERRORS.liveNeedsCertificate : SIGNING_ERRORS.authorityNeedsCertificate);
    },

    /**
     * As `forRecord`, for systems whose certificate is optional (`certificateOptional`):
     * where `forRecord` would refuse a location that names no certificate, undefined
     * (the record is signed with the software producer's key).
     */
    async forRecordIfNamed(location: LocationForFiscal, environment: 'test' | 'live', mode: 'stub' | 'authority'): Promise<SigningKey | undefined> {
      if (!deviceKey && !(environment === 'test' && mode === 'stub') && !certificateIdOf(location)) return undefined;
      return service.forRecord(location, environment, mode);
    },

    /** The TLS client certificate for the real authority; 400 when the location has none. */
    async forAuthority(location: LocationForFiscal): Promise<SigningKey> {
      const certificateId = certificateIdOf(location);
      if (!certificateId) throw badRequest(SIGNING_ERRORS.authorityNeedsCertificate);
      return uploadedKey(location.account_id, certificateId);
    },

    /** A certificate was uploaded or deleted in this process: forget what was cached of it. */
    forget(accountId: string, certificateId: string): void {
      uploaded.delete(`${accountId}:${certificateId}`);
      missing.delete(`${accountId}:${certificateId}`);
    },
  };
  return service;
}

export type SigningKeyService = ReturnType<typeof createSigningKeyService>;
