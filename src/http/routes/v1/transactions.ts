import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { TransactionService } from '../../../services/transactions.ts';
import { authOf } from '../../hooks/auth.ts';
import { SYSTEM_KEYS, statuses } from '../../../countries/registry.ts';
import { StringEnum, authErrors, DateTime, ErrorBody, IdParams, ListOf, NullableDateTime, PageQuery } from '../../schemas.ts';

/** Every status of the status machine (core/status.ts, with each system's own), in the spec's order. */
const STATUSES = statuses.names;

const RenderHintSchema = Type.Object({
  key: Type.String(), placement: Type.String(), mandatory: Type.Boolean(), kind: Type.String(), value: Type.String(),
});

export const TransactionSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  account_id: Type.String({ format: 'uuid' }),
  location_id: Type.String({ format: 'uuid' }),
  idempotency_key: Type.String(),
  type: StringEnum(['sale', 'refund', 'void', 'cancellation']),
  status: StringEnum(STATUSES),
  amount: Type.Integer({ description: 'total in minor units' }),
  currency: Type.String(),
  country: Type.String(),
  system: Type.String({ description: `fiscal system: ${SYSTEM_KEYS.join(', ')}` }),
  environment: StringEnum(['test', 'live'], { description: 'from the key prefix' }),
  request_payload: Type.Unknown({ description: 'the request as sent' }),
  response_payload: Type.Record(Type.String(), Type.Unknown(), { description: 'authority answer; submit_error {error_code, raw_message} after a failed submission; error {category, authority_code} where the system classifies its failures (Greece: transient, regulatory_reject, permanent); warnings: what the merchant should know about an accepted outcome (Greece: accepted with warnings; VERI*FACTU: a duplicate answer, which carries no CSV, so no fiscal_id)' }),
  fiscal_id: Type.Union([Type.String(), Type.Null()]),
  fiscal_id_upstream: Type.Union([Type.String(), Type.Null()]),
  error_message: Type.Union([Type.String(), Type.Null()], { description: 'null while the translation of a failure is pending' }),
  render_hints: Type.Array(RenderHintSchema),
  cancels_transaction_id: Type.Union([Type.String(), Type.Null()]),
  cancellation_transaction_id: Type.Union([Type.String(), Type.Null()]),
  deadline_at: NullableDateTime,
  offline_until: Type.Union([DateTime, Type.Null()], { description: 'a record kept offline by a system with an offline fallback: when its grace window closes (its creation + the grace of the account\'s tier when it first went offline); null otherwise' }),
  submitted_at: NullableDateTime,
  completed_at: NullableDateTime,
  created_at: DateTime,
  updated_at: DateTime,
});

const CreateBody = Type.Unknown({
  description:
    'Canonical form: location_id, timestamp, items[] {description, quantity, unit_price, tax_rate, tax_amount, total_amount}, ' +
    'pretax_amount, tax_amount, total_amount (integer minor units), currency, payment_method, customer_context, metadata, type. ' +
    'Guide form: location_id, type, amount, line_items[] {description, quantity, unit_price, vat_rate (hundredths of a percent)}, metadata. ' +
    'Sandbox (test keys): metadata.sandbox_outcome = accept | reject:<code> | timeout | error:<code>.',
});

/** A dry run's answer (services/transaction-preview.ts; docs/decisions.md "Transaction preview"). */
const PreviewSchema = Type.Object({
  preview: Type.Literal(true),
  computed_at: Type.String({ format: 'date-time', description: 'when the preview was built: the issue time its record carries' }),
  chain_head_at: Type.Union([DateTime, Type.Null()], { description: 'when the chain head it was built on was written (null: the chain has no record yet); a snapshot read without a lock' }),
  seq: Type.Integer({ description: 'the place the record would take in its chain' }),
  previous_fingerprint: Type.Union([Type.String(), Type.Null()], { description: 'the chain link it would point back to' }),
  normalized: Type.Record(Type.String(), Type.Unknown(), { description: 'the sale as create normalizes it (canonical form)' }),
  transaction_id: Type.String({ format: 'uuid', description: 'the id the preview was built with: create assigns its own, so what a record derives from it (SII invoice number by default, NF525 transaction_id, PT qr_image URL) differs' }),
  transaction: Type.Object({
    location_id: Type.String({ format: 'uuid' }), type: Type.String(), status: Type.String({ description: 'the status create stores it with, before any submission (an inline wait may answer a later one)' }),
    amount: Type.Integer(), currency: Type.String(), country: Type.String(), system: Type.String(), environment: Type.String(),
    fiscal_id: Type.Union([Type.String(), Type.Null()], { description: 'the fiscal id it would take' }),
    render_hints: Type.Array(RenderHintSchema), deadline_at: NullableDateTime, completed_at: NullableDateTime,
  }),
  fiscal_record: Type.Object({
    content_type: Type.String({ description: 'application/xml or application/json, as GET /v1/transactions/{id}/fiscal-record answers' }),
    body: Type.String({ description: 'the fiscal document, signed with the key create would use' }),
    placeholder: Type.Boolean(),
    fingerprint: Type.Union([Type.String(), Type.Null()]),
    fiscal_id: Type.Union([Type.String(), Type.Null()]),
    document_number: Type.Union([Type.String(), Type.Null()], { description: 'the document number it would take in its series' }),
    qr_data: Type.Union([Type.String(), Type.Null()], { description: 'the QR code content' }),
  }),
  signature: Type.Object({
    certificate: Type.Union([Type.Literal('uploaded'), Type.Literal('sandbox'), Type.Literal('device'), Type.Null()], { description: 'the issuer certificate that signed it, where the system signs with one (device: held in the PKCS#11 signing device)' }),
    record_key_id: Type.Union([Type.String(), Type.Null()], { description: "the location's record key, where the installation signs the records" }),
  }),
});

export function transactionRoutes(app: FastifyInstance, s: { transactions: TransactionService }) {
  const security = [{ bearer: [] }];
  const tags = ['transactions'];

  app.post('/v1/transactions', {
    config: { permission: 'transactions:write' },
    schema: {
      tags, security, summary: 'Create a transaction: stored, signed and answered at once; submitted in the background',
      headers: Type.Object({
        'idempotency-key': Type.Optional(Type.String({ description: '1-255 characters; generated when absent' })),
        'x-fiscalization-timeout': Type.Optional(Type.String({ description: 'seconds (0-10) to wait for the authority inline' })),
        'x-svc-sandbox': Type.Optional(Type.String({ description: '"authority": use the real authority sandbox (test keys only)' })),
      }),
      body: CreateBody,
      response: { 200: TransactionSchema, 201: TransactionSchema, 400: ErrorBody, 409: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    const h = req.headers;
    const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
    const { transaction, created } = await s.transactions.create(authOf(req), req.body, {
      bodyText: req.jsonText ?? undefined, idempotencyKey: one(h['idempotency-key']), timeout: one(h['x-fiscalization-timeout']), sandbox: one(h['x-svc-sandbox']),
    });
    return reply.code(created ? 201 : 200).send(transaction);
  });

  app.post('/v1/transactions/preview', {
    config: { permission: 'transactions:write' },
    schema: {
      tags, security,
      summary: 'Preview a create: the normalized sale, the exact fiscal record (signed as create would sign it), QR content and render hints, the number and chain place it would take, computed on the chain as it stands. Stores, numbers, sends and emits nothing; takes no idempotency key. Errors are create\'s, with the same messages.',
      headers: Type.Object({
        'x-svc-sandbox': Type.Optional(Type.String({ description: '"authority": preview the record for the real authority sandbox (test keys only), as create would make it' })),
      }),
      body: CreateBody,
      response: { 200: PreviewSchema, 400: ErrorBody, ...authErrors },
    },
  }, async (req) => {
    const h = req.headers;
    const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
    return s.transactions.preview(authOf(req), req.body, {
      idempotencyKey: one(h['idempotency-key']), timeout: one(h['x-fiscalization-timeout']), sandbox: one(h['x-svc-sandbox']),
    });
  });

  app.get('/v1/transactions', {
    config: { permission: 'transactions:read' },
    schema: {
      tags, security, summary: 'List transactions, newest first',
      querystring: Type.Object({
        ...PageQuery,
        status: Type.Optional(StringEnum(STATUSES, { 'x-error': `status must be one of ${STATUSES.join(', ')}` })),
        location_id: Type.Optional(Type.String()),
      }),
      response: { 200: ListOf(TransactionSchema), 400: ErrorBody, ...authErrors },
    },
  }, async (req) => {
    const q = req.query as { limit: number; offset: number; status?: string; location_id?: string };
    return s.transactions.list(authOf(req), { status: q.status, location_id: q.location_id }, { limit: q.limit, offset: q.offset });
  });

  app.get('/v1/transactions/:id', {
    config: { permission: 'transactions:read' },
    schema: { tags, security, summary: 'Get a transaction', params: IdParams, response: { 200: TransactionSchema, 404: ErrorBody, ...authErrors } },
  }, async (req) => s.transactions.get(authOf(req), (req.params as { id: string }).id));

  app.get('/v1/transactions/:id/fiscal-record', {
    config: { permission: 'transactions:read' },
    schema: {
      tags, security, params: IdParams,
      summary: 'The fiscal document exactly as signed or sent (XML or JSON), in the system\'s real format where it is built; X-Fiscal-Record-Placeholder: true marks a minimal placeholder document of a system whose real format is not built yet.',
      response: { 404: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    const record = await s.transactions.fiscalRecord(authOf(req), (req.params as { id: string }).id);
    return reply
      .header('content-type', `${record.content_type}; charset=utf-8`)
      .header('x-fiscal-record-placeholder', String(record.placeholder))
      .header('x-fiscal-record-seq', String(record.seq))
      .send(record.body);
  });

  app.get('/v1/transactions/:id/qr.png', {
    config: { permission: 'transactions:read' },
    schema: {
      tags, security, params: IdParams,
      summary: 'The receipt\'s QR code as a PNG, drawn with the parameters its country fixes (level M; Portugal: version 9 or more), from the QR render hint (TicketBAI, VERI*FACTU, Portugal, Greece once AADE answered); 404 where the transaction has no QR. What Portugal\'s `image_url` render hint points to.',
      response: { 404: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    const png = await s.transactions.qrImage(authOf(req), (req.params as { id: string }).id);
    // The hint it draws is fixed once the record is built: a client may keep the image.
    return reply.header('content-type', 'image/png').header('cache-control', 'private, max-age=86400').send(png);
  });

  app.post('/v1/transactions/:id/cancel', {
    config: { permission: 'transactions:write' },
    schema: {
      tags, security, summary: 'Cancel: a new cancellation transaction carrying the annulment record (idempotent)',
      // Repeating it answers the first cancellation (200): clients may retry it like a GET
      // (the SDK reads this mark: scripts/generate-sdk.ts REPEATABLE_OPERATIONS).
      'x-repeatable': true,
      params: IdParams,
      body: Type.Object({
        reason: Type.Optional(Type.String({ maxLength: 500, 'x-error': 'reason must be a string of at most 500 characters' })),
        sandbox_outcome: Type.Optional(Type.Unknown({ description: 'Test keys only: what the sandbox authority answers to this cancellation, as metadata.sandbox_outcome does for a create (accept by default; the original\'s value is not inherited).' })),
      }),
      response: { 200: TransactionSchema, 201: TransactionSchema, 404: ErrorBody, 409: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    const body = (req.body ?? {}) as { reason?: string; sandbox_outcome?: unknown };
    const { transaction, created } = await s.transactions.cancel(authOf(req), (req.params as { id: string }).id, body.reason, body.sandbox_outcome);
    return reply.code(created ? 201 : 200).send(transaction);
  });

  // Beyond the spec (docs: es-correct decisions): corrects an accepted record without a
  // rectifying document (VERI*FACTU subsanación), in the background. 202: the transaction is
  // not created, its correction is accepted for submission; a replay answers 200.
  app.post('/v1/transactions/:id/correct', {
    config: { permission: 'transactions:write' },
    schema: {
      tags, security, params: IdParams,
      summary: 'Correct an accepted transaction (beyond the spec): a second record of the same document carrying a corrected customer or description (VERI*FACTU: a RegistroAlta with Subsanacion S, e.g. after "AceptadoConErrores"), sent in the background. The transaction keeps its number, amount and status; response_payload.correction follows the correction (pending, accepted, rejected) and, once accepted, response_payload.authority and warnings are its answer. Amounts, lines, dates and the number cannot be corrected (400: refund or cancel instead); only a transaction its authority accepted, of a system that corrects records (409).',
      headers: Type.Object({
        'idempotency-key': Type.Optional(Type.String({ description: '1-255 characters; the same key and body answer the transaction again (200); another body is a 409' })),
      }),
      body: Type.Object({
        customer_context: Type.Optional(Type.Unknown({ description: 'the customer as a create takes it (tax_id, name, address…): replaces the stored one' })),
        metadata: Type.Optional(Type.Unknown({ description: 'descriptive metadata the system lets a correction change (VERI*FACTU: description); merged into the stored metadata' })),
        sandbox_outcome: Type.Optional(Type.Unknown({ description: 'Test keys only: what the sandbox authority answers to this correction, as metadata.sandbox_outcome does for a create.' })),
      }, { additionalProperties: true }),
      response: { 200: TransactionSchema, 202: TransactionSchema, 400: ErrorBody, 404: ErrorBody, 409: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    const key = req.headers['idempotency-key'];
    const { transaction, created } = await s.transactions.correct(authOf(req), (req.params as { id: string }).id, req.body ?? {}, {
      idempotencyKey: Array.isArray(key) ? key[0] : key, bodyText: req.jsonText ?? undefined,
    });
    return reply.code(created ? 202 : 200).send(transaction);
  });
}
