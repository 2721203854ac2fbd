import { describe, expect, it } from 'vitest';
import { OPERATION_IDS, derivedOperationId, genericErrorStatuses, openapiPath, openapiTransform } from './openapi.ts';

describe('openapi transform', () => {
  it('derives an operationId for a route the table does not name, and the table names are unique', () => {
    expect(derivedOperationId('POST', '/v1/agents/{agent_id}/telemetry')).toBe('postV1AgentsByAgentIdTelemetry');
    expect(derivedOperationId('GET', '/v1/transactions/{id}/qr.png')).toBe('getV1TransactionsByIdQrPng');
    expect(openapiPath('/v1/locations/:id/archives/:archive_id')).toBe('/v1/locations/{id}/archives/{archive_id}');
    const names = Object.values(OPERATION_IDS);
    expect(new Set(names).size).toBe(names.length);
  });

  it('lists the errors a route of each kind can answer', () => {
    expect(genericErrorStatuses({ method: 'GET', url: '/health', isPublic: true }).sort()).toEqual(['500', '503']);
    expect(genericErrorStatuses({ method: 'POST', url: '/v1/transactions/:id/cancel', isPublic: false }).sort())
      .toEqual(['400', '401', '403', '404', '413', '415', '429', '500', '503']);
  });

  it('works on a copy: the route\'s own schema is left as it was', () => {
    const own = { querystring: { type: 'object', required: ['limit'], properties: { limit: { type: 'integer', default: 20 } } }, response: { 200: { type: 'object' } } };
    const before = JSON.stringify(own);
    const { schema } = openapiTransform({ schema: own, url: '/v1/things', route: { method: 'GET', url: '/v1/things', config: {} } as never });
    expect(JSON.stringify(own)).toBe(before);
    expect(schema.operationId).toBe('getV1Things');
    expect(schema.querystring.required).toEqual([]);
    expect(Object.keys(schema.response).sort()).toEqual(['200', '401', '403', '429', '500', '503']);
    expect(schema.response['429'].headers['Retry-After']).toBeDefined();
  });
});
