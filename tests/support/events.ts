// Builders for events and metadata in tests.
import { randomUUID } from 'node:crypto';
import type { EventMetadata, NewEvent } from '../../application/ports/event-store';

export function testMetadata(overrides: Partial<EventMetadata> = {}): EventMetadata {
  return {
    tenant_id: null,
    actor: { kind: 'system', id: 'test' },
    request_id: null,
    correlation_id: randomUUID(),
    causation_id: null,
    occurred_at: new Date().toISOString(),
    ip: null,
    ...overrides,
  };
}

export function newEvent(type: string, data: unknown = {}, id: string = randomUUID()): NewEvent {
  return { id, type, data, metadata: testMetadata() };
}

/** A stream name no other test (or earlier run against a shared server) has used. */
export function uniqueStream(category = 'test'): string {
  return `${category}-${randomUUID().replace(/-/g, '')}`;
}
