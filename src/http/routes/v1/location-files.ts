import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { LocationFileService } from '../../../services/location-files.ts';
import { authOf } from '../../hooks/auth.ts';
import { ErrorBody, IdParams, ListOf, PageQuery, authErrors } from '../../schemas.ts';

/**
 * The files an inspector asks for about a location (DECISIONS "Files an inspector asks
 * for"): one route per path the fiscal systems offer (`FiscalSystem.locationFiles`), e.g.
 * `GET /v1/locations/{id}/corrispettivi?date=YYYY-MM-DD`, or a paged JSON list such as
 * `GET /v1/locations/{id}/closures?limit=&offset=`. Read permission `locations:read`;
 * another account's (or a deleted) location, or one whose system has no such file: 404;
 * a missing or malformed parameter: 400 naming the form. Nothing here names a country.
 */
/** A paged file's body (produced as text by the plug-in: documented, not serialized). */
const PagedFile = ListOf(Type.Object({}, { additionalProperties: true, description: 'one signed document, as stored, with its id and created_at' }));

export function locationFileRoutes(app: FastifyInstance, s: { locationFiles: LocationFileService }) {
  const security = [{ bearer: [] }];
  const tags = ['locations'];
  for (const { path, files } of s.locationFiles.paths()) {
    // A system's file at this path selects by a parameter, or is a paged list (`limit`,
    // `offset`); the reference lists each name once (the service checks the form of the
    // location's own system).
    const params = [...new Map(files.flatMap((f) => ('name' in f.param ? [[f.param.name, f.param] as const] : []))).values()];
    const paged = files.some((f) => f.param.kind === 'page');
    const querystring = Type.Object({
      ...Object.fromEntries(params.map((p) => [
        p.name,
        Type.Optional(Type.String({ description: p.kind === 'date' ? 'a date, YYYY-MM-DD (required)' : 'a month, YYYY-MM (required)' })),
      ])),
      ...(paged ? PageQuery : {}),
    });
    app.get(`/v1/locations/:id/${path}`, {
      config: { permission: 'locations:read' },
      schema: {
        tags, security, params: IdParams, querystring,
        summary: files.map((f) => f.summary).join(' / '),
        response: {
          200: {
            description: `the file (${[...new Set(files.map((f) => f.contentType))].join(', ')})`,
            // A paged list is documented as the spec's list shape; its items are the system's signed documents.
            content: Object.fromEntries(files.map((f) => [f.contentType.split(';')[0]!, { schema: f.param.kind === 'page' ? PagedFile : { type: 'string' } }])),
          },
          400: ErrorBody, 404: ErrorBody, ...authErrors,
        },
      },
    }, async (req, reply) => {
      const out = await s.locationFiles.produce(authOf(req), (req.params as { id: string }).id, path, req.query as Record<string, unknown>);
      for (const [k, v] of Object.entries(out.headers ?? {})) reply.header(k, v);
      return reply.header('content-type', out.contentType).send(out.body);
    });

    // A listed file whose items download by id (e.g. `archives/{archive_id}`).
    const items = files.flatMap((f) => (f.item ? [f.item] : []));
    if (items.length === 0) continue;
    const idName = items[0]!.idName;
    app.get(`/v1/locations/:id/${path}/:${idName}`, {
      config: { permission: 'locations:read' },
      schema: {
        tags, security,
        params: Type.Object({ id: Type.String(), [idName]: Type.String() }),
        summary: items.map((f) => f.summary).join(' / '),
        response: {
          200: {
            description: `the item (${[...new Set(items.map((f) => f.contentType))].join(', ')}), with a Content-Disposition file name`,
            content: Object.fromEntries(items.map((f) => [f.contentType.split(';')[0]!, { schema: { type: 'string' } }])),
          },
          404: ErrorBody, ...authErrors,
        },
      },
    }, async (req, reply) => {
      const p = req.params as Record<string, string>;
      const out = await s.locationFiles.produceItem(authOf(req), p.id!, path, p[idName]!);
      reply.header('content-type', out.contentType);
      for (const [k, v] of Object.entries(out.headers ?? {})) reply.header(k, v);
      return reply.send(out.body);
    });
  }
}
