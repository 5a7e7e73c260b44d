import { randomUUID } from 'node:crypto';
import type { RequestContext } from '../../application/shared/request-context';

export function userContext(overrides: Partial<RequestContext> = {}): RequestContext {
  return {
    tenant_id: null,
    actor: { kind: 'user', id: 'user-1' },
    request_id: randomUUID(),
    correlation_id: randomUUID(),
    causation_id: null,
    ip: '203.0.113.7',
    ...overrides,
  };
}
