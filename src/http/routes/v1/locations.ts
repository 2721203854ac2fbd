import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import { SYSTEM_KEYS } from '../../../countries/registry.ts';
import type { CreateLocationInput, LocationService, PatchLocationInput } from '../../../services/locations.ts';
import { authOf } from '../../hooks/auth.ts';
import { StringEnum, authErrors, DateTime, ErrorBody, IdParams, ListOf, NullableDateTime, PageQuery } from '../../schemas.ts';

const Status = StringEnum(['active', 'inactive'], { 'x-error': "status must be 'active' or 'inactive'" });
const CountryConfig = Type.Unknown({ description: 'Country- and system-specific; validated on create and PATCH (see the API guide). Secret fields are masked when read.' });

export const LocationSchema = Type.Object({
  id: Type.String({ format: 'uuid' }),
  account_id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  country: Type.String(),
  system: Type.Union([Type.String(), Type.Null()], { description: `fiscal system chosen from country and country_config: ${SYSTEM_KEYS.join(', ')}` }),
  address: Type.Union([Type.String(), Type.Null()]),
  tax_id: Type.Union([Type.String(), Type.Null()]),
  country_config: Type.Record(Type.String(), Type.Unknown()),
  status: StringEnum(['active', 'inactive']),
  cert_expiry: NullableDateTime,
  created_at: DateTime,
  updated_at: DateTime,
  warnings: Type.Optional(Type.Array(Type.String(), { description: 'on create and PATCH, e.g. the certificate NIF differs from tax_id' })),
});

export const CreateBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 255, pattern: '\\S' }),
  country: Type.String({ minLength: 1, maxLength: 2 }),
  address: Type.Optional(Type.String({ maxLength: 500 })),
  tax_id: Type.Optional(Type.String({ maxLength: 50 })),
  country_config: Type.Optional(CountryConfig),
});

export const PatchBody = Type.Object({
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', 'x-error': 'name must be 1-255 characters' })),
  // One schema (not an anyOf), so the length error carries this message.
  address: Type.Optional(Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: 500, 'x-error': 'address must be at most 500 characters or null' })),
  country_config: Type.Optional(CountryConfig),
  status: Type.Optional(Status),
  country: Type.Optional(Type.String({ description: 'immutable: only the current value is accepted' })),
  tax_id: Type.Optional(Type.String({ description: 'immutable: only the current value is accepted' })),
});

const ListQuery = Type.Object({
  ...PageQuery,
  country: Type.Optional(Type.String({ pattern: '^[A-Za-z]{2}$', 'x-error': 'country must be a 2-letter ISO 3166-1 code' })),
  status: Type.Optional(Status),
});

export function locationRoutes(app: FastifyInstance, s: { locations: LocationService }) {
  const security = [{ bearer: [] }];
  const tags = ['locations'];
  app.post('/v1/locations', {
    config: { permission: 'locations:write' },
    schema: { tags, summary: 'Register a merchant location', security, body: CreateBody, response: { 201: LocationSchema, 400: ErrorBody, ...authErrors } },
  }, async (req, reply) => reply.code(201).send(await s.locations.create(authOf(req), req.body as CreateLocationInput)));

  app.get('/v1/locations', {
    config: { permission: 'locations:read' },
    schema: { tags, summary: 'List locations, newest first', security, querystring: ListQuery, response: { 200: ListOf(LocationSchema), 400: ErrorBody, ...authErrors } },
  }, async (req) => {
    const q = req.query as { limit: number; offset: number; country?: string; status?: 'active' | 'inactive' };
    return s.locations.list(authOf(req), { country: q.country?.toUpperCase(), status: q.status }, { limit: q.limit, offset: q.offset });
  });

  app.get('/v1/locations/:id', {
    config: { permission: 'locations:read' },
    schema: { tags, summary: 'Get a location', security, params: IdParams, response: { 200: LocationSchema, 404: ErrorBody, ...authErrors } },
  }, async (req) => s.locations.get(authOf(req), (req.params as { id: string }).id));

  app.patch('/v1/locations/:id', {
    config: { permission: 'locations:write' },
    schema: { tags, summary: 'Change name, address, country_config or status (country and tax_id are immutable)', security, params: IdParams, body: PatchBody, response: { 200: LocationSchema, 400: ErrorBody, 404: ErrorBody, ...authErrors } },
  }, async (req) => s.locations.patch(authOf(req), (req.params as { id: string }).id, (req.body ?? {}) as PatchLocationInput));

  app.delete('/v1/locations/:id', {
    config: { permission: 'locations:write' },
    schema: { tags, summary: 'Delete a location (soft: hidden from lists, kept for the fiscal record)', security, params: IdParams, response: { 204: Type.Null(), 404: ErrorBody, ...authErrors } },
  }, async (req, reply) => {
    await s.locations.remove(authOf(req), (req.params as { id: string }).id);
    return reply.code(204).send();
  });
}
