import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, badRequest } from '../../../core/errors.ts';
import {
  CERT_ERRORS, certificateTooLarge, MAX_CERTIFICATE_BYTES, type CertificateService, type UploadInput,
} from '../../../services/certificates.ts';
import { authOf } from '../../hooks/auth.ts';
import { authErrors, DateTime, ErrorBody, IdParams, Nullable } from '../../schemas.ts';

export const CertificateSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  certificate_id: Type.String({ description: 'user-assigned: letters, digits, hyphen, underscore, dot' }),
  subject_cn: Nullable(Type.String()),
  issuer: Nullable(Type.String()),
  not_before: DateTime,
  not_after: DateTime,
  nif: Nullable(Type.String({ description: 'from the subject serialNumber (IDCES-/VATES- prefix removed)' })),
  created_at: DateTime,
  warnings: Type.Optional(Type.Array(Type.String(), { description: 'on upload: the certificate is not valid yet (not_before in the future); locations using this certificate whose tax_id differs from its NIF' })),
});

const NOT_MULTIPART = 'unsupported content type: send multipart/form-data';
/** Text fields (certificate_id, password) are short; a longer one is refused, never cut. */
const FIELD_MAX_BYTES = 4096;

/** The form's three parts: `certificate` a file, the other two text fields. */
const FORM_TEXT_FIELDS = new Set(['certificate_id', 'password']);
export const FORM_ERRORS = {
  twice: (name: string) => `${name} must be sent once`,
  notAFile: 'certificate must be sent as a file (a form part with a filename)',
  notAField: (name: string) => `${name} must be a text field, not a file`,
} as const;

/**
 * Reads the upload form: `certificate` (a file part), `certificate_id` and `password`
 * (text fields), in any order; other parts are ignored. A part of ours sent twice, or in
 * the wrong form, is a 400 naming it (never "is required", and never the first of two
 * taken silently). The body is read to its end before an answer is given.
 */
async function readForm(req: FastifyRequest): Promise<UploadInput> {
  if (!req.isMultipart()) throw new ApiError(415, NOT_MULTIPART);
  const out: UploadInput = {};
  let refusal: ApiError | undefined;
  const refuse = (message: string) => { refusal ??= badRequest(message); };
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        if (part.fieldname === 'certificate' && out.file === undefined && !refusal) {
          out.file = await part.toBuffer();
          continue;
        }
        if (part.fieldname === 'certificate') refuse(FORM_ERRORS.twice('certificate'));
        else if (FORM_TEXT_FIELDS.has(part.fieldname)) refuse(FORM_ERRORS.notAField(part.fieldname));
        part.file.resume(); // not ours (or refused): drained and ignored
        continue;
      }
      if (part.fieldname === 'certificate') { refuse(FORM_ERRORS.notAFile); continue; }
      if (!FORM_TEXT_FIELDS.has(part.fieldname)) continue;
      if (part.valueTruncated) { refuse(`${part.fieldname} is too long`); continue; }
      const value = typeof part.value === 'string' ? part.value : String(part.value);
      if (part.fieldname === 'certificate_id') {
        if (out.certificateId === undefined) out.certificateId = value;
        else refuse(FORM_ERRORS.twice('certificate_id'));
      } else if (out.password === undefined) out.password = value;
      else refuse(FORM_ERRORS.twice('password'));
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw certificateTooLarge();
    if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT') throw new ApiError(413, 'too many parts in the multipart form');
    if (err instanceof ApiError) throw err;
    // Only the form is read here (no database): whatever else fails is a broken multipart
    // body (no boundary, cut short…), the client's, never a 500.
    req.log.info({ err }, 'malformed multipart body');
    throw badRequest('malformed multipart body');
  }
  if (refusal) throw refusal;
  return out;
}

/**
 * Certificates. The upload is the one multipart route: the multipart parser is
 * registered in this plugin's own scope, so every other route still takes JSON only.
 */
export function certificateRoutes(app: FastifyInstance, s: { certificates: CertificateService }) {
  const security = [{ bearer: [] }];
  const tags = ['certificates'];

  app.register(async (scope) => {
    await scope.register(multipart, {
      limits: { fileSize: MAX_CERTIFICATE_BYTES, files: 5, fields: 10, parts: 20, fieldSize: FIELD_MAX_BYTES },
    });
    // Here JSON (and anything else) is the wrong content type.
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('*', (_req, _payload, done) => done(new ApiError(415, NOT_MULTIPART), undefined));

    scope.post('/v1/certificates', {
      config: { permission: 'certificates:write' },
      schema: {
        tags, security,
        summary: 'Upload a PKCS#12 certificate (multipart: certificate, password, certificate_id)',
        description:
          'multipart/form-data with `certificate` (the .p12/.pfx file, max 10 MB), `password` and `certificate_id` ' +
          '(letters, digits, hyphen, underscore, dot; unique per account). The private key and chain are stored sealed. ' +
          'An expired certificate, or one whose key usage does not allow signing, is refused (400); one not valid yet is kept with a warning.',
        consumes: ['multipart/form-data'],
        response: { 201: CertificateSchema, 400: ErrorBody, 409: ErrorBody, 413: ErrorBody, 415: ErrorBody, ...authErrors },
      },
    }, async (req, reply) => reply.code(201).send(await s.certificates.upload(authOf(req), await readForm(req))));
  });

  app.get('/v1/certificates', {
    config: { permission: 'certificates:read' },
    schema: { tags, security, summary: "List the account's certificates (metadata only), newest first", response: { 200: Type.Object({ data: Type.Array(CertificateSchema) }), ...authErrors } },
  }, async (req) => s.certificates.list(authOf(req)));

  app.delete('/v1/certificates/:id', {
    config: { permission: 'certificates:write' },
    schema: { tags, security, summary: 'Delete a certificate; `{id}` is its certificate_id', params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, ...authErrors } },
  }, async (req, reply) => {
    await s.certificates.remove(authOf(req), (req.params as { id: string }).id);
    return reply.code(204).send();
  });
}
