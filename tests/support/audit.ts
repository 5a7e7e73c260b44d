// Completeness of the audit log, checked over everything a test server recorded: every event
// (except the checkpoints that anchor the chains) is an entry of its tenant's log, or of the
// platform's when it has no tenant, naming the same actor and subject.

import { expect } from 'chai';
import { AUDIT_LOG, type AuditLogEntry, PLATFORM_AUDIT_CHAIN } from '../../projections/audit-log';
import { parseStreamName } from '../../domain/shared/stream-names';
import type { TestServer } from './server';
import { eventually } from './stores';

/** Asserts every recorded event is audited with its actor; answers the event types seen. */
export async function expectEveryEventAudited(server: TestServer): Promise<Set<string>> {
  const head = await server.platform.storedEvents.headPosition();
  await eventually(() => server.platform.readYourWrites(head, ['audit_log']), 10_000, 'the audit log at the head');
  const events = await server.platform.storedEvents.readAll({ fromPosition: 0, maxCount: 1_000_000 });
  const log = server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG);
  const types = new Set<string>();
  for (const event of events) {
    if (parseStreamName(event.stream).category === 'auditCheckpoint') continue;
    types.add(event.type);
    const where = `${event.type} at ${event.position}`;
    const entry = await log.get(event.id);
    expect(entry, `${where} has no audit entry`).to.not.equal(null);
    if (!entry) continue;
    expect({ tenant_id: entry.tenant_id, actor_kind: entry.actor_kind, actor_id: entry.actor_id, action: entry.action }, where).to.deep.equal({
      tenant_id: event.metadata.tenant_id ?? PLATFORM_AUDIT_CHAIN,
      actor_kind: event.metadata.actor.kind,
      actor_id: event.metadata.actor.id,
      action: event.type,
    });
    if (event.metadata.subject) expect({ kind: entry.subject_kind, id: entry.subject_id }, where).to.deep.equal(event.metadata.subject);
  }
  return types;
}
