import { describe, expect, it } from 'vitest';
import { FEATURES_BY_TIER } from './features.ts';

describe('features', () => {
  it('every tier fiscalizes in every registered system (registry order), then its operations features', () => {
    const base = ['es-ticketbai', 'es-verifactu', 'es-sii', 'it-sdi', 'it-dc', 'fr-nf525', 'pt-saft', 'gr-mydata', 'webhooks', 'retry_queue', 'sandbox'];
    expect(FEATURES_BY_TIER).toEqual({
      starter: base,
      growth: [...base, 'batch_processing'],
      scale: [...base, 'batch_processing', 'fleet_telemetry'],
      enterprise: [...base, 'batch_processing', 'fleet_telemetry', 'extended_offline_grace'],
    });
  });
});
