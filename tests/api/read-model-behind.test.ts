// A write whose read models do not catch up within READ_YOUR_WRITES_TIMEOUT_MS (its projections
// stopped here; in life a projection failing, or far behind) is recorded all the same, and its
// answer says so: 503 read_model_behind with Retry-After, never a 404 for what was just made nor
// a 500, nor a 200 with the resource as it was before the change. An answer the write's own
// events hold entirely is given from them; one that carries a secret shown only once is given
// from the read model as it stands.

import { expect } from 'chai';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleCommand } from '../../application/command-handling/handle-command';
import { toolCallAggregate } from '../../application/tool-call/tool-calls';
import { toolCallStream } from '../../domain/tool-call/tool-call';
import { userContext } from '../support/context';
import { type Account, gql, joinAs, registerOwner } from '../support/identity';
import { openApiFixture } from '../support/openapi-documents';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';

const SUPER_ADMIN = { email: 'root@lagging.test', password: 'root password 123' };

describe('writes whose read models lag behind', () => {
  let server: TestServer;
  let owner: Account;
  let adminToken: string;
  let member: Account;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  before(async () => {
    // Outbound calls to this machine: the tool test calls a local API.
    server = await startTestServer({
      READ_YOUR_WRITES_TIMEOUT_MS: '50',
      OUTBOUND_ALLOW_INSECURE: 'true',
      OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true',
      SUPER_ADMIN_EMAIL: SUPER_ADMIN.email,
      SUPER_ADMIN_PASSWORD: SUPER_ADMIN.password,
    });
    owner = await registerOwner(server, 'lagging-org');
    // For the CRM, handoff and SDK connection features.
    await subscribeTo(server, owner.tenant_id, 'premium');
    // A second member, whose role the owner changes below.
    member = await joinAs(server, await registerOwner(server, 'lagging-member'), owner.tenant_id, 'member');
    // Logged in while the read models follow: a session they do not show is refused.
    adminToken = (await server.request('POST', '/api/v1/admin/auth/login', { body: SUPER_ADMIN })).json.token;
    await server.platform.projections.stop();
  });
  after(() => server.close());

  /**
   * The id of what `created` made, for a test's setup: from its 201, or, where the read models
   * followed more than READ_YOUR_WRITES_TIMEOUT_MS (50 ms here) behind on a busy machine, from
   * the list at `listPath` once they caught up.
   */
  async function idOfCreated(created: TestResponse, listPath: string, name: string, idOf = (json: { id: string }) => json.id): Promise<string> {
    if (created.status === 201) return idOf(created.json);
    expect(created.json.code, created.text).to.equal('read_model_behind');
    let id: string | undefined;
    await eventually(
      async () => {
        id = (await server.request('GET', listPath, { headers: as(owner) })).json.items?.find((item: { name: string }) => item.name === name)?.id;
        return id !== undefined;
      },
      10_000,
      `${name} listed`,
    );
    return id!;
  }

  it('a created team: 503 read_model_behind with Retry-After, the team recorded, and listed once the read models catch up', async () => {
    const created = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'Night shift' } });
    expect(created.status, created.text).to.equal(503);
    expect(created.json).to.deep.equal({
      code: 'read_model_behind',
      message: 'the change of the team is recorded, but the read models have not caught up with it yet: read it again in a moment rather than repeat it',
    });
    expect(created.headers.get('retry-after')).to.equal('1');
    expect(await created.events()).to.include('TeamCreated@team');

    await server.platform.projections.start();
    try {
      const listed = async () => (await server.request('GET', '/api/v1/org/teams', { headers: as(owner) })).json.items.map((team: { name: string }) => team.name);
      await eventually(async () => (await listed()).length > 0, 10_000, 'the team listed');
      expect(await listed()).to.deep.equal(['Night shift']);
    } finally {
      await server.platform.projections.stop();
    }
  });

  it('a renamed team: 503 read_model_behind, not the old name with a version a conditional write would find stale (it was a 200)', async () => {
    await server.platform.projections.start();
    let team: { id: string; etag: string };
    try {
      const created = await server.request('POST', '/api/v1/org/teams', { headers: as(owner), body: { name: 'Day shift' } });
      expect(created.status, created.text).to.equal(201);
      team = { id: created.json.id, etag: created.headers.get('etag')! };
    } finally {
      await server.platform.projections.stop();
    }
    const renamed = await server.request('PATCH', `/api/v1/org/teams/${team.id}`, { headers: { ...as(owner), 'if-match': team.etag }, body: { name: 'Early shift' } });
    expect(renamed.status, renamed.text).to.equal(503);
    expect(renamed.json.code).to.equal('read_model_behind');
    expect(await renamed.events()).to.include('TeamUpdated@team');

    await server.platform.projections.start();
    try {
      await eventually(async () => (await server.request('GET', `/api/v1/org/teams/${team.id}`, { headers: as(owner) })).json.name === 'Early shift', 10_000, 'the new name');
      const read = await server.request('GET', `/api/v1/org/teams/${team.id}`, { headers: as(owner) });
      expect(read.headers.get('etag')).to.equal('"1"');
    } finally {
      await server.platform.projections.stop();
    }
  });

  it('a configuration: 503 read_model_behind rather than "not configured"; one whose answer carries a new secret gives it all the same', async () => {
    const crm = await server.request('POST', '/api/v1/tenant/crm', { headers: as(owner), body: { kind: 'webhook', url: 'https://93.184.215.15/crm' } });
    expect(crm.status, crm.text).to.equal(503);
    expect(crm.json.code).to.equal('read_model_behind');
    expect(await crm.events()).to.include('CrmConfigured@crmConfig');

    // The secret made here is shown only in this answer: losing it to a 503 would leave the webhook unverifiable.
    const handoff = await server.request('POST', '/api/v1/tenant/handoff', { headers: as(owner), body: { url: 'https://93.184.215.14/hooks/handoff' } });
    expect(handoff.status, handoff.text).to.equal(200);
    expect(handoff.json.secret).to.be.a('string').and.not.equal('');
  });

  it('a created SDK connection: 503 read_model_behind saying how to get a secret (it was a 404, the secret lost)', async () => {
    const created = await server.request('POST', '/api/v1/org/sdk-connections', { headers: as(owner), body: { name: 'Late shop', webhook_url: 'https://93.184.215.14/svc' } });
    expect(created.status, created.text).to.equal(503);
    expect(created.json.code).to.equal('read_model_behind');
    expect(created.json.message).to.include('rotate the secret');
    expect(await created.events()).to.include('SdkConnectionCreated@sdkConnection');
  });

  it('an approved tool call: 503 read_model_behind, not the call still awaiting approval (it was a 200)', async () => {
    const toolCallId = 'call-behind';
    const member = { kind: 'user' as const, id: owner.user_id };
    await handleCommand(
      server.platform.commands,
      toolCallAggregate,
      toolCallStream(toolCallId),
      {
        type: 'RequestToolCall',
        data: {
          tenant_id: owner.tenant_id,
          workspace_id: 'w1',
          tool_call_id: toolCallId,
          tool_id: 'tool-1',
          tool_name: 'refund_order',
          risk: 'approval_required',
          arguments: { order_id: 'o-1' },
          caller: member,
          origin: { kind: 'test' },
          awaiting_approval: true,
          end_user_token_sealed: null,
          end_user_session_sealed: null,
        },
      },
      userContext({ tenant_id: owner.tenant_id, actor: member }),
    );
    await server.platform.projections.start();
    try {
      await eventually(async () => (await server.request('GET', `/api/v1/tool-calls/${toolCallId}`, { headers: as(owner) })).status === 200, 10_000, 'the call listed');
    } finally {
      await server.platform.projections.stop();
    }
    const approved = await server.request('POST', `/api/v1/tool-calls/${toolCallId}/approve`, { headers: as(owner) });
    expect(approved.status, approved.text).to.equal(503);
    expect(approved.json.message).to.match(/^the decision is recorded/);
    expect(await approved.events()).to.include('ToolCallApproved@toolCall');
  });

  it("a tool's test call: 503 read_model_behind saying where its outcome is (it was a 404 right after the call ran)", async () => {
    const api = createServer((_request, response) => response.writeHead(200, { 'content-type': 'application/json' }).end('{"pets":[]}'));
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
      let toolId: string;
      await server.platform.projections.start();
      try {
        const [workspace] = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items;
        const integration = await server.request('POST', `/api/v1/workspaces/${workspace.id}/integrations`, { headers: as(owner), body: { name: 'Pets', base_url: base, auth: { kind: 'none' } } });
        const integrationId = await idOfCreated(integration, `/api/v1/workspaces/${workspace.id}/integrations`, 'Pets');
        const tool = await server.request('POST', `/api/v1/workspaces/${workspace.id}/tools`, { headers: as(owner), body: { integration_id: integrationId, name: 'listPets', method: 'GET', path: '/pets' } });
        toolId = await idOfCreated(tool, `/api/v1/workspaces/${workspace.id}/tools`, 'listPets');
      } finally {
        await server.platform.projections.stop();
      }
      const tested = await server.request('POST', `/api/v1/tools/${toolId}/test`, { headers: as(owner), body: { arguments: {} } });
      expect(tested.status, tested.text).to.equal(503);
      expect(tested.json.message).to.include(`GET /api/v1/tools/${toolId}/logs`);
      expect(await tested.events()).to.include.members(['ToolCallRequested@toolCall', 'ToolCallSucceeded@toolCall']);
    } finally {
      await new Promise((resolve) => api.close(resolve));
    }
  });

  it('an OpenAPI import: every tool recorded, then 503 read_model_behind (it stopped after the integration, its tools not made)', async () => {
    await server.platform.projections.start();
    let workspaceId: string;
    try {
      workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;
    } finally {
      await server.platform.projections.stop();
    }
    const applied = await server.request('POST', `/api/v1/workspaces/${workspaceId}/integrations/import/apply`, {
      headers: as(owner),
      body: { source: { document: openApiFixture('petstore.json').toString() }, integration: { name: 'Pet store', base_url: 'http://127.0.0.1:9/v1', auth: { kind: 'none' } } },
    });
    expect(applied.status, applied.text).to.equal(503);
    expect(applied.json.message).to.match(/^the import is recorded/);
    const events = await applied.events();
    expect(events.filter((event) => event === 'ToolCreated@tool')).to.have.length(3);
    expect(events).to.include.members(['IntegrationCreated@integration', 'IntegrationOpenApiImported@integration']);
  });

  it('an OpenAPI reimport: every change recorded and answered, no tool waiting for the read models', async () => {
    await server.platform.projections.start();
    let integrationId: string;
    try {
      const workspaceId = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items[0].id;
      const applied = await server.request('POST', `/api/v1/workspaces/${workspaceId}/integrations/import/apply`, {
        headers: as(owner),
        body: { source: { document: openApiFixture('petstore-expanded.yaml').toString() }, integration: { name: 'Expanded pets', base_url: 'http://127.0.0.1:9/v1', auth: { kind: 'none' } } },
      });
      integrationId = await idOfCreated(applied, `/api/v1/workspaces/${workspaceId}/integrations`, 'Expanded pets', (json) => (json as unknown as { integration: { id: string } }).integration.id);
    } finally {
      await server.platform.projections.stop();
    }
    const reimported = await server.request('POST', `/api/v1/integrations/${integrationId}/reimport`, { headers: as(owner), body: { source: { document: openApiFixture('petstore-expanded-v2.yaml').toString() } } });
    expect(reimported.status, reimported.text).to.equal(200);
    const recorded = (await reimported.events()).filter((event) => /^(Integration|Tool)/.test(event));
    expect(recorded).to.deep.equal(['ToolCreated@tool', 'ToolUpdated@tool', 'ToolUpdated@tool', 'ToolUpdated@tool', 'IntegrationOpenApiImported@integration']);
  });

  it('an invitation: 503 read_model_behind (it was a 500)', async () => {
    const invited = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'late@example.com', role: 'member' } });
    expect(invited.status, invited.text).to.equal(503);
    expect(invited.json.code).to.equal('read_model_behind');
    expect(await invited.events()).to.include('InvitationSent@invitation');
  });

  it('a created workspace is answered from its event (it was a 500), and so is a renamed one (it had the old name)', async () => {
    const created = await gql(server, 'mutation { create_workspace(name: "Evenings") { id name is_default } }', {}, owner.token);
    expect(created.status, created.text).to.equal(200);
    expect(created.json.errors).to.equal(undefined);
    expect(created.json.data.create_workspace).to.include({ name: 'Evenings', is_default: false });

    const [defaultWorkspace] = (await server.request('GET', '/api/v1/org/workspaces', { headers: as(owner) })).json.items;
    const renamed = await gql(server, 'mutation ($id: ID!) { rename_workspace(id: $id, name: "Front desk") { id name } }', { id: defaultWorkspace.id }, owner.token);
    expect(renamed.json.errors, renamed.text).to.equal(undefined);
    expect(renamed.json.data.rename_workspace).to.deep.equal({ id: defaultWorkspace.id, name: 'Front desk' });
  });

  it("a member's new role: 503 read_model_behind, not the member with the old role and version", async () => {
    const changed = await server.request('PUT', `/api/v1/org/members/${member.user_id}/role`, { headers: as(owner), body: { role: 'admin' } });
    expect(changed.status, changed.text).to.equal(503);
    expect(changed.json.message).to.match(/^the change of the member is recorded/);
    expect(await changed.events()).to.include('MemberRoleChanged@membership');
  });

  it('a disabled member: their sessions end all the same, then 503 read_model_behind', async () => {
    const disabled = await server.request('PUT', `/api/v1/org/members/${member.user_id}/status`, { headers: as(owner), body: { status: 'disabled' } });
    expect(disabled.status, disabled.text).to.equal(503);
    expect(await disabled.events()).to.include.members(['MemberStatusChanged@membership', 'SessionRevoked@session']);
  });

  it("the organization's settings: read_model_behind over GraphQL, not the settings as they were", async () => {
    const changed = await gql(server, 'mutation { update_settings(input: { timezone: "Asia/Tokyo" }) { timezone } }', {}, owner.token);
    expect(changed.json.errors?.[0]?.extensions?.code, changed.text).to.equal('read_model_behind');
    expect(await changed.events()).to.include('TenantSettingsChanged@tenant');
  });

  it("a tenant's quotas changed by the super admin: 503 read_model_behind, not the quotas as they were", async () => {
    const changed = await server.request('PUT', `/api/v1/admin/tenants/${owner.tenant_id}/quotas`, {
      headers: { authorization: `Bearer ${adminToken}` },
      body: { overrides: { messages_per_month: 5000 }, reason: 'a busy month' },
    });
    expect(changed.status, changed.text).to.equal(503);
    expect(changed.json.message).to.match(/^the change of the quotas is recorded/);
  });

  it('a plan made by the super admin: 503 read_model_behind (it was a 404)', async () => {
    const created = await server.request('POST', '/api/v1/admin/plans', {
      headers: { authorization: `Bearer ${adminToken}` },
      body: { code: 'late-team', name: 'Late team', prices: [{ interval: 'month', amount: 4900, currency: 'usd' }], limits: { messages_per_month: 1000, documents: 50, users: 5, business_tools: 5 } },
    });
    expect(created.status, created.text).to.equal(503);
    expect(created.json.message).to.match(/^the plan is recorded/);
    expect(await created.events()).to.include('PlanCreated@plan');
  });

  // Last: the cancellation ends the subscription the tests above need (at the period's end).
  it('a cancelled subscription: 503 read_model_behind, not the subscription still active', async () => {
    const cancelled = await server.request('POST', '/api/v1/billing/cancel', { headers: as(owner), body: { at_period_end: true } });
    expect(cancelled.status, cancelled.text).to.equal(503);
    expect(cancelled.json.message).to.match(/^the cancellation is recorded/);
    expect(await cancelled.events()).to.include('SubscriptionCancellationScheduled@subscription');
  });
});
