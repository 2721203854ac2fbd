import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../../core/clock.ts';
import type { ReceiptService } from '../../../receipts/service.ts';
import { authOf } from '../../hooks/auth.ts';
import { ErrorBody, IdParams, authErrors } from '../../schemas.ts';

/**
 * The rendered receipt (DECISIONS "Beyond the spec"; docs/receipts.md): every item the
 * transaction's country requires, from its render hints, in the format asked for.
 * Read permission `transactions:read`; another account's transaction: 404; a bad option:
 * 400 naming what is allowed.
 */
export function receiptRoutes(app: FastifyInstance, s: { receipts: ReceiptService; clock: Clock }) {
  // Checked by the service (its 400s name the allowed values): the schema documents them.
  const querystring = Type.Object({
    format: Type.Optional(Type.String({ description: 'html (default), pdf, png, text, or escpos (ESC/POS bytes with a native QR)' })),
    width: Type.Optional(Type.String({ description: 'paper width in mm for text, escpos, pdf and png: 80 (48 columns, default) or 58 (32 columns)' })),
    lang: Type.Optional(Type.String({ description: 'the country\'s language (es, it, fr, pt, el) or en; default the country\'s' })),
    escpos: Type.Optional(Type.String({ description: 'with format=text: 1 answers ESC/POS bytes (as format=escpos)' })),
  });
  const receiptBody = {
    description: 'the receipt',
    content: {
      'text/html': { schema: { type: 'string' } },
      'text/plain': { schema: { type: 'string' } },
      'application/pdf': { schema: { type: 'string', format: 'binary' } },
      'image/png': { schema: { type: 'string', format: 'binary' } },
      'application/vnd.escpos': { schema: { type: 'string', format: 'binary' } },
    },
  };

  app.get('/v1/transactions/:id/receipt', {
    // Also a portal endpoint: the merchant portal shows a sale's receipt (src/portal, its receipt page).
    config: { permission: 'transactions:read', portal: true },
    schema: {
      tags: ['transactions'], security: [{ bearer: [] }], params: IdParams,
      summary: 'The receipt, drawn with every item the country requires (QR at its legal size and error correction): HTML, PDF, PNG, plain text or ESC/POS for 58/80 mm printers, in the country\'s language or English.',
      querystring,
      response: { 200: receiptBody, 400: ErrorBody, 404: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    const out = await s.receipts.render(authOf(req), (req.params as { id: string }).id, req.query as Record<string, unknown>);
    for (const [k, v] of Object.entries(out.headers)) reply.header(k, v);
    return reply.header('content-type', out.contentType).send(out.body);
  });

  app.post('/v1/transactions/:id/receipt/duplicate', {
    config: { permission: 'transactions:write' },
    schema: {
      tags: ['transactions'], security: [{ bearer: [] }], params: IdParams, querystring,
      summary: 'A numbered duplicate of the receipt (a reprint), for systems whose law wants reprints marked and counted (France "DUPLICATA n° k", Spain "DUPLICADO n.º k", Portugal "2.ª via"); the copy number is in X-Receipt-Copy.',
      response: { 200: receiptBody, 400: ErrorBody, 404: ErrorBody, ...authErrors },
    },
  }, async (req, reply) => {
    const out = await s.receipts.duplicate(authOf(req), (req.params as { id: string }).id, req.query as Record<string, unknown>, s.clock.now());
    for (const [k, v] of Object.entries(out.headers)) reply.header(k, v);
    return reply.header('x-receipt-copy', String(out.copy)).header('content-type', out.contentType).send(out.body);
  });
}
