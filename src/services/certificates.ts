import { nifMismatchWarning } from '../certificates/nif-match.ts';
import { ApiError, badRequest, conflict, notFound } from '../core/errors.ts';
import { newId } from '../core/ids.ts';
import { describeCertificate, Pkcs12Error, readPkcs12, type SigningMaterial } from '../certificates/pkcs12.ts';
import { seal, unseal } from '../crypto/sealed.ts';
import { isUniqueViolation } from '../store/db.ts';
import { CERTIFICATE_ID_UNIQUE, certificatesRepo, type CertificateRow } from '../store/repos/certificates-repo.ts';
import type { AuthContext } from './auth-context.ts';
import type { Deps } from './deps.ts';

/** A certificate as the API shows it: the stored row without its owner and its sealed key material. */
export type CertificateView = Omit<CertificateRow, 'account_id' | 'key_material'> & {
  /** On upload: locations using this certificate whose tax_id is not its NIF. */
  warnings?: string[];
};

/** What the multipart form carried (undefined = the part was absent). */
export interface UploadInput {
  certificateId?: string | undefined;
  password?: string | undefined;
  file?: Buffer | undefined;
}

export const MAX_CERTIFICATE_BYTES = 10 * 1024 * 1024;
export const CERTIFICATE_ID_MAX = 128;
const CERTIFICATE_ID_RE = /^[A-Za-z0-9._-]+$/;

export const CERT_ERRORS = {
  idRequired: 'certificate_id is required',
  idInvalid: `certificate_id must be 1-${CERTIFICATE_ID_MAX} characters: letters, digits, hyphen, underscore, dot`,
  passwordRequired: 'password is required',
  fileRequired: 'certificate file is required',
  unreadable: 'certificate file is not a readable PKCS#12 (.p12/.pfx) file',
  badPassword: 'invalid PKCS#12 file or wrong password',
  noPrivateKey: 'PKCS#12 file contains no private key',
  noCertificate: 'PKCS#12 file contains no certificate for its private key',
  severalIdentities: 'PKCS#12 file contains several certificates with their private keys: upload each under its own certificate_id',
  tooLarge: 'certificate file too large (max 10 MB)',
  cannotSign: 'certificate cannot sign: its key usage allows neither digitalSignature nor nonRepudiation',
  duplicate: 'certificate with this ID already exists',
  notFound: 'certificate not found',
} as const;

const PKCS12_MESSAGES: Record<Pkcs12Error['reason'], string> = {
  unreadable: CERT_ERRORS.unreadable,
  bad_password: CERT_ERRORS.badPassword,
  no_private_key: CERT_ERRORS.noPrivateKey,
  no_certificate: CERT_ERRORS.noCertificate,
  several_identities: CERT_ERRORS.severalIdentities,
};

export const certificateTooLarge = () => new ApiError(413, CERT_ERRORS.tooLarge);
/** An expired certificate is refused: nothing it signs would be accepted (docs/decisions.md "Certificates"). */
export const certificateExpired = (notAfter: Date) => badRequest(`certificate has expired (not_after ${notAfter.toISOString()})`);
/** A certificate uploaded before its validity starts (a renewal) is kept, with this warning. */
const NOT_YET_VALID_LEEWAY_MS = 5 * 60_000;
export const notYetValidWarning = (notBefore: Date) =>
  `certificate is not valid before ${notBefore.toISOString()}: records signed with it until then will be refused`;

/** The sealed key material is bound to its row: copied into another row, it does not open. */
const materialAad = (rowId: string) => `certificate:${rowId}:key_material`;

interface StoredMaterial {
  private_key_pem: string;
  certificate_pem: string;
  chain_pem: string[];
}

export function createCertificateService(
  deps: Deps,
  hooks: { onRemoved?: (accountId: string, certificateId: string) => void; onAdded?: (accountId: string, certificateId: string) => void } = {},
) {
  const { db, clock, keys } = deps;

  const toView = (r: CertificateRow): CertificateView => ({
    id: r.id,
    certificate_id: r.certificate_id,
    subject_cn: r.subject_cn,
    issuer: r.issuer,
    not_before: r.not_before,
    not_after: r.not_after,
    nif: r.nif,
    created_at: r.created_at,
  });

  /**
   * Reads the PKCS#12 with its password and stores the key, certificate and chain
   * sealed (the file and the password themselves are not kept).
   */
  async function upload(auth: AuthContext, input: UploadInput): Promise<CertificateView> {
    const certificateId = input.certificateId?.trim();
    if (!certificateId) throw badRequest(CERT_ERRORS.idRequired);
    if (certificateId.length > CERTIFICATE_ID_MAX || !CERTIFICATE_ID_RE.test(certificateId)) throw badRequest(CERT_ERRORS.idInvalid);
    if (input.password === undefined) throw badRequest(CERT_ERRORS.passwordRequired);
    if (!input.file || input.file.length === 0) throw badRequest(CERT_ERRORS.fileRequired);
    if (input.file.length > MAX_CERTIFICATE_BYTES) throw certificateTooLarge();

    let material: SigningMaterial;
    try {
      material = readPkcs12(input.file, input.password);
    } catch (err) {
      if (err instanceof Pkcs12Error) throw badRequest(PKCS12_MESSAGES[err.reason]);
      throw badRequest(CERT_ERRORS.unreadable);
    }
    const info = describeCertificate(material.certificatePem);
    // Checked before anything is stored: a certificate that can never sign a record the
    // authority accepts is refused now, not found out at the first rejected invoice.
    const now = clock.now();
    if (info.notAfter.getTime() <= now.getTime()) throw certificateExpired(info.notAfter);
    if (!info.canSign) throw badRequest(CERT_ERRORS.cannotSign);

    const id = newId();
    const stored: StoredMaterial = { private_key_pem: material.privateKeyPem, certificate_pem: material.certificatePem, chain_pem: material.chainPem };
    const row: CertificateRow = {
      id,
      account_id: auth.accountId,
      certificate_id: certificateId,
      subject_cn: info.subjectCn,
      issuer: info.issuer,
      not_before: info.notBefore,
      not_after: info.notAfter,
      nif: info.nif,
      key_material: seal(keys.seal, JSON.stringify(stored), materialAad(id)),
      created_at: now,
    };
    try {
      await db.transaction((tx) => certificatesRepo.insert(tx, row));
    } catch (err) {
      if (isUniqueViolation(err, CERTIFICATE_ID_UNIQUE)) throw conflict(CERT_ERRORS.duplicate);
      throw err;
    }
    hooks.onAdded?.(auth.accountId, certificateId);
    const warnings = [
      // Minutes of clock skew are not a renewal: a certificate issued just now is not warned about.
      ...(info.notBefore.getTime() > now.getTime() + NOT_YET_VALID_LEEWAY_MS ? [notYetValidWarning(info.notBefore)] : []),
      ...(await certificatesRepo.referencingLocations(db, auth.accountId, certificateId))
        .map((l) => nifMismatchWarning(row.nif, l.tax_id, `location ${l.id} (${l.name})`))
        .filter((w): w is string => w !== null),
    ];
    return { ...toView(row), ...(warnings.length ? { warnings } : {}) };
  }

  async function list(auth: AuthContext): Promise<{ data: CertificateView[] }> {
    return { data: (await certificatesRepo.list(db, auth.accountId)).map(toView) };
  }

  async function remove(auth: AuthContext, certificateId: string): Promise<void> {
    const gone = await db.transaction((tx) => certificatesRepo.remove(tx, auth.accountId, certificateId));
    if (!gone) throw notFound(CERT_ERRORS.notFound);
    hooks.onRemoved?.(auth.accountId, certificateId);
  }

  /**
   * The signing material of an account's certificate, unsealed, for the country
   * adapters (never leaves the process). 404 `certificate not found` when there is none.
   */
  async function loadSigningMaterial(accountId: string, certificateId: string): Promise<SigningMaterial> {
    const row = await certificatesRepo.get(db, accountId, certificateId);
    if (!row) throw notFound(CERT_ERRORS.notFound);
    const m = JSON.parse(unseal(keys.seal, row.key_material, materialAad(row.id))) as StoredMaterial;
    return { privateKeyPem: m.private_key_pem, certificatePem: m.certificate_pem, chainPem: m.chain_pem };
  }

  return { upload, list, remove, loadSigningMaterial };
}

export type CertificateService = ReturnType<typeof createCertificateService>;
