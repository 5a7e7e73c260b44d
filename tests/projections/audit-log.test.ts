// The audit log's chain is a function of the events: an entry's hash must stay the one every
// earlier release computed for it, or the checkpoints signed over an existing chain would no
// longer verify after an upgrade (docs/decisions.md, "Audit chain").

import { expect } from 'chai';
import type { RecordedEvent } from '../../application/ports/event-store';
import { GENESIS_HASH, chainEntry } from '../../projections/audit-log';

describe('audit log chain', () => {
  it('hashes an entry as earlier releases did: the data in canonical JSON, then the chained fields after the previous hash', () => {
    const event = {
      id: 'e-1',
      stream: 'orchestrationEvent-e-1',
      type: 'OrchestrationEventQueued',
      revision: 0,
      position: 7,
      recorded_at: '2026-11-29T10:00:00.000Z',
      data: { b: [1, { y: 2, x: 'ü' }], a: null },
      metadata: { tenant_id: 't-1', actor: { kind: 'user', id: 'u-1' }, occurred_at: '2026-11-29T10:00:00.000Z', request_id: 'r-1', correlation_id: 'c-1', causation_id: null },
    } as unknown as RecordedEvent;
    const entry = chainEntry(event, 1, GENESIS_HASH);
    expect(entry.fields.data_hash).to.equal('3f4a8d581985c099933ac85ea25b817b9cf2dad5863ab667c7f33e9ce5a6612e');
    expect(entry.hash).to.equal('69de955d5a4c1e26ab452bc02b2b44d7cdac6a5203cbee956dbb0d9c333e6318');
  });
});
