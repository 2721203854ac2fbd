import { describe, expect, it } from 'vitest';
import type { ProcessorDeps } from '../../types.ts';

// No static import of the plug-in or the registry: the test decides which loads first.
describe('the LROE processor belongs to the TicketBAI plug-in', () => {
  it('the plug-in loads before the registry: its processor imports nothing that needs the registry', async () => {
    const { ticketBai } = await import('../index.ts');
    const { SYSTEMS, statuses } = await import('../../registry.ts');
    expect(SYSTEMS).toContain(ticketBai);
    expect(statuses.inBatch).toEqual(['pending_lroe']);
    expect(ticketBai.processors?.({} as ProcessorDeps).map((p) => p.name)).toEqual(['spain/lroe']);
  });
});
