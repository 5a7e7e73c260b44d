// Business tools for suites that call them: integrations through their routes (or, for an
// address the deployment's guard refuses when saved, recorded through the aggregate), and
// tools through the application's createTool, as the tools routes do.

import { handleCommand } from '../../application/command-handling/handle-command';
import { integrationAggregate } from '../../application/integration/integrations';
import type { Principal } from '../../application/session/sessions';
import { type ToolInput, createTool } from '../../application/tool/tools';
import type { IntegrationAuth } from '../../domain/integration/integration';
import { integrationStream } from '../../domain/integration/integration';
import { userContext } from './context';
import type { Account } from './identity';
import type { TestServer } from './server';

export interface IntegrationBody {
  name: string;
  base_url: string;
  auth: IntegrationAuth;
  credentials?: string;
  default_headers?: Record<string, string>;
}

/** Creates an integration through its route as `account`; answers its id. */
export async function createIntegrationAs(server: TestServer, account: Account, workspaceId: string, body: IntegrationBody): Promise<string> {
  const created = await server.request('POST', `/api/v1/workspaces/${workspaceId}/integrations`, { headers: { authorization: `Bearer ${account.token}` }, body });
  if (created.status !== 201) throw new Error(`integration not created: ${created.status} ${created.text}`);
  return created.json.id;
}

/**
 * Records an integration as the aggregate decides it, without the outbound guard of the
 * routes: for a base URL the deployment refuses to call (the call's own guard then refuses it).
 */
export async function recordIntegration(server: TestServer, tenantId: string, workspaceId: string, body: IntegrationBody): Promise<string> {
  const integrationId = server.platform.ids.newId();
  const credentials = body.credentials === undefined ? ({ kind: 'keep' } as const) : ({ kind: 'given', sealed: server.platform.secrets.seal(body.credentials) } as const);
  const result = await handleCommand(
    server.platform.commands,
    integrationAggregate,
    integrationStream(integrationId),
    {
      type: 'CreateIntegration',
      data: { tenant_id: tenantId, workspace_id: workspaceId, integration_id: integrationId, name: body.name, base_url: body.base_url, auth: body.auth, default_headers: body.default_headers ?? {}, credentials },
    },
    userContext({ tenant_id: tenantId }),
  );
  await server.platform.readYourWrites(result.position);
  return integrationId;
}

/** The principal of an account's token, as the routes would have it. */
export function principalOf(account: Account, role: Principal['role']): Principal {
  return { kind: 'user', user_id: account.user_id, tenant_id: account.tenant_id, role, jti: 'test-session' };
}

/** Creates a tool as an owner of the account's organization; answers its id. */
export async function createToolAs(server: TestServer, owner: Account, workspaceId: string, input: ToolInput): Promise<string> {
  const tool = await createTool(server.platform.identity, principalOf(owner, 'owner'), workspaceId, input, userContext({ tenant_id: owner.tenant_id, actor: { kind: 'user', id: owner.user_id } }));
  return tool.value.id;
}

/** Lifts the organization's business tools limit (the free plan has 2), as the super admin's override does. */
export async function liftToolLimit(server: TestServer, tenantId: string): Promise<void> {
  const { setQuotaOverrides } = await import('../../application/quota-override/quota-overrides');
  const { systemContext } = await import('../../application/shared/request-context');
  await setQuotaOverrides(server.platform.identity, 'test-admin', tenantId, { overrides: { users: null, business_tools: null }, reason: 'test suite' }, systemContext('test'));
}
