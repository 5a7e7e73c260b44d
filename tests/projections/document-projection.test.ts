// A document-per-stream projection applies each event once: an event it has applied already
// (redelivered, or replayed after later ones) changes nothing, a creation included; an event
// about a document that does not exist writes none; and an event that changes nothing writes
// nothing. Checked on real read models (tenants, sessions), through their `apply`; and the
// creation's guard on the read models that keep their own `apply` (memberships, plans).

import { expect } from 'chai';
import type { RecordedOf } from '../../application/ports/domain-event-store';
import { type Document, type FieldEqualities, matchesEqualities } from '../../application/ports/read-store';
import type { DomainEventType } from '../../domain/events';
import type { ProjectionView } from '../../projections/projection';
import { INTEGRATIONS, integrationsProjection } from '../../projections/integrations';
import { MEMBERSHIPS, type MembershipDocument, membershipId, membershipsProjection } from '../../projections/memberships';
import { PLANS, type PlanDocument, plansProjection } from '../../projections/plans';
import { SESSIONS, type SessionDocument, sessionsProjection } from '../../projections/sessions';
import { TENANTS, type TenantDocument, tenantsProjection } from '../../projections/tenants';
import { testMetadata } from '../support/events';

/** The runner's view of one batch, in memory, counting what it writes. */
class MemoryView implements ProjectionView {
  private readonly documents = new Map<string, Document>();
  writes = 0;

  async get<T extends Document = Document>(collection: string, id: string): Promise<T | null> {
    return (this.documents.get(`${collection}/${id}`) as T | undefined) ?? null;
  }

  put(collection: string, doc: Document): void {
    this.writes += 1;
    this.documents.set(`${collection}/${doc.id}`, doc);
  }

  patch(collection: string, id: string, changes: Record<string, unknown>): void {
    const key = `${collection}/${id}`;
    const current = this.documents.get(key);
    if (!current) return;
    this.writes += 1;
    this.documents.set(key, { ...current, ...changes });
  }

  delete(collection: string, id: string): void {
    this.writes += 1;
    this.documents.delete(`${collection}/${id}`);
  }

  deleteWhere(collection: string, where: FieldEqualities): void {
    this.writes += 1;
    for (const [key, doc] of this.documents) if (key.startsWith(`${collection}/`) && matchesEqualities(doc, where)) this.documents.delete(key);
  }

  patchWhere(collection: string, where: FieldEqualities, changes: Record<string, unknown>): void {
    this.writes += 1;
    for (const [key, doc] of this.documents) if (key.startsWith(`${collection}/`) && matchesEqualities(doc, where)) this.documents.set(key, { ...doc, ...changes });
  }
}

let position = 0;
function recorded<Type extends DomainEventType>(type: Type, data: RecordedOf<Type>['data'], stream: string, revision: number): RecordedOf<Type> {
  position += 1;
  return { id: `event-${position}`, type, data, metadata: testMetadata({ occurred_at: '2026-11-30T09:00:00.000Z' }), stream, revision, position, recorded_at: '2026-11-30T09:00:00.000Z' } as unknown as RecordedOf<Type>;
}

describe('read models applying each event once', () => {
  const tenantId = 'tenant-1';
  const created = () =>
    recorded('TenantCreated', { tenant_id: tenantId, name: 'Acme', slug: 'acme', branding: {}, settings: {}, created_at: '2026-11-30T09:00:00.000Z' }, `tenant-${tenantId}`, 0);
  const renamed = () => recorded('TenantRenamed', { tenant_id: tenantId, name: 'Acme Ltd', previous_name: 'Acme' }, `tenant-${tenantId}`, 1);

  it('builds the document from its events, stamped with the last one applied', async () => {
    const view = new MemoryView();
    const first = created();
    const second = renamed();
    await tenantsProjection.apply(first, view);
    await tenantsProjection.apply(second, view);
    const tenant = await view.get<TenantDocument>(TENANTS, tenantId);
    expect(tenant).to.deep.include({ id: tenantId, name: 'Acme Ltd', name_key: 'acme ltd', slug: 'acme', status: 'active', revision: 1, position: second.position });
  });

  it('changes nothing for an event applied already, even a creation replayed after a change', async () => {
    const view = new MemoryView();
    const first = created();
    const second = renamed();
    await tenantsProjection.apply(first, view);
    await tenantsProjection.apply(second, view);
    const writes = view.writes;
    await tenantsProjection.apply(first, view);
    await tenantsProjection.apply(second, view);
    expect(view.writes).to.equal(writes);
    expect(await view.get<TenantDocument>(TENANTS, tenantId)).to.deep.include({ name: 'Acme Ltd', revision: 1, position: second.position });
  });

  it('writes no document for an event about one that does not exist', async () => {
    const view = new MemoryView();
    await tenantsProjection.apply(renamed(), view);
    expect(view.writes).to.equal(0);
    expect(await view.get(TENANTS, tenantId)).to.equal(null);
  });

  it('writes nothing when the event changes nothing the document shows', async () => {
    const view = new MemoryView();
    const jti = 'session-1';
    const stream = `session-${jti}`;
    const started = recorded(
      'SessionStarted',
      { jti, user_id: 'user-1', tenant_id: tenantId, audience: 'tenant', issued_at: '2026-11-30T09:00:00.000Z', expires_at: '2026-12-01T09:00:00.000Z', ip: null, user_agent: null, impersonated_by: 'admin-1' },
      stream,
      0,
    );
    await sessionsProjection.apply(started, view);
    const writes = view.writes;
    await sessionsProjection.apply(recorded('ImpersonationStarted', { jti, tenant_id: tenantId, user_id: 'user-1', admin_id: 'admin-1', expires_at: '2026-12-01T09:00:00.000Z' }, stream, 1), view);
    expect(view.writes).to.equal(writes);
    expect(await view.get<SessionDocument>(SESSIONS, jti)).to.deep.include({ status: 'active', impersonated_by: 'admin-1', position: started.position });
  });

  it('removes the document when an event leaves none (a deletion), and writes none for an event after it', async () => {
    const view = new MemoryView();
    const stream = 'integration-integration-1';
    const place = { tenant_id: tenantId, workspace_id: 'workspace-1', integration_id: 'integration-1', name: 'Orders API' };
    await integrationsProjection.apply(
      recorded(
        'IntegrationCreated',
        { ...place, base_url: 'https://orders.example.com', auth: { kind: 'none' }, credentials_sealed: null, default_headers: {}, created_at: '2026-11-30T09:00:00.000Z' },
        stream,
        0,
      ),
      view,
    );
    expect(await view.get(INTEGRATIONS, 'integration-1')).to.deep.include({ name: 'Orders API', has_credentials: false });
    await integrationsProjection.apply(recorded('IntegrationDeleted', { ...place, deleted_at: '2026-11-30T10:00:00.000Z' }, stream, 1), view);
    expect(await view.get(INTEGRATIONS, 'integration-1')).to.equal(null);
    const writes = view.writes;
    const source = { url: null, sha256: 'a'.repeat(64), api_version: '1', imported_at: '2026-11-30T11:00:00.000Z' };
    const { tenant_id, workspace_id, integration_id } = place;
    await integrationsProjection.apply(recorded('IntegrationOpenApiImported', { tenant_id, workspace_id, integration_id, source }, stream, 2), view);
    expect(view.writes).to.equal(writes);
    expect(await view.get(INTEGRATIONS, 'integration-1')).to.equal(null);
  });

  it('keeps a membership\'s later changes when its earlier events are seen again', async () => {
    const view = new MemoryView();
    const stream = 'membership-tenant-1';
    const joined = recorded('MemberJoined', { tenant_id: tenantId, user_id: 'user-1', role: 'member', joined_at: '2026-11-30T09:00:00.000Z' }, stream, 0);
    const promoted = recorded('MemberRoleChanged', { tenant_id: tenantId, user_id: 'user-1', role: 'admin', previous_role: 'member' }, stream, 1);
    const suspended = recorded('MemberStatusChanged', { tenant_id: tenantId, user_id: 'user-1', status: 'disabled' }, stream, 2);
    const demoted = recorded('MemberRoleChanged', { tenant_id: tenantId, user_id: 'user-1', role: 'member', previous_role: 'admin' }, stream, 3);
    for (const event of [joined, promoted, suspended, demoted]) await membershipsProjection.apply(event, view);
    for (const event of [joined, promoted, suspended]) await membershipsProjection.apply(event, view);
    expect(await view.get<MembershipDocument>(MEMBERSHIPS, membershipId(tenantId, 'user-1'))).to.deep.include({ role: 'member', status: 'disabled', position: demoted.position });
  });

  it('keeps a plan\'s later changes when its PlanCreated is seen again', async () => {
    const view = new MemoryView();
    const stream = 'plan-plan-1';
    const created = recorded(
      'PlanCreated',
      {
        plan_id: 'plan-1',
        code: 'pro',
        created_at: '2026-11-30T09:00:00.000Z',
        name: 'Pro',
        description: '',
        prices: [{ interval: 'month', amount: 2900, currency: 'usd' }],
        limits: { messages_per_month: null, documents: null, users: null, business_tools: null },
        features: { sdk_connections: true, whatsapp: false, handoff: false, crm: false },
      },
      stream,
      0,
    );
    const retired = recorded('PlanRetired', { plan_id: 'plan-1', retired_at: '2026-11-30T10:00:00.000Z' }, stream, 1);
    await plansProjection.apply(created, view);
    await plansProjection.apply(retired, view);
    await plansProjection.apply(created, view);
    expect(await view.get<PlanDocument>(PLANS, 'plan-1')).to.deep.include({ status: 'retired', position: retired.position });
  });
});
