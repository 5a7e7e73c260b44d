// The people and workspaces of a suite about workspace permissions (documents, integrations,
// business tools, their import and calls): one organization with an admin, a member whose team
// may write its default workspace, one whose team only reads it, and one in no team; a second
// workspace of that organization no team is granted; and another organization.

import { expect } from 'chai';
import { setQuotaOverrides } from '../../application/quota-override/quota-overrides';
import { systemContext } from '../../application/shared/request-context';
import type { PlanLimits } from '../../domain/plan/plan';
import { type Account, gql, joinAs, registerOwner } from './identity';
import type { TestServer } from './server';

export interface WorkspaceCast {
  owner: Account;
  admin: Account;
  /** A member whose team may write `workspaceId`. */
  writer: Account;
  /** A member whose team may only read `workspaceId`. */
  reader: Account;
  /** A member in no team. */
  stranger: Account;
  /** The owner of another organization. */
  outsider: Account;
  /** The organization's default workspace, granted to the writers' and the readers' teams. */
  workspaceId: string;
  /** A second workspace of the organization, granted to no team. */
  otherWorkspaceId: string;
  /** The other organization's default workspace. */
  foreignWorkspaceId: string;
}

export const authorizedAs = (account: Account, extra: Record<string, string> = {}): Record<string, string> => ({ authorization: `Bearer ${account.token}`, ...extra });

async function defaultWorkspace(server: TestServer, account: Account): Promise<string> {
  return (await server.request('GET', '/api/v1/org/workspaces', { headers: authorizedAs(account) })).json.items[0].id;
}

/**
 * Casts the suite's people under `prefix` (organization slugs `<prefix>-org` and
 * `<prefix>-other-org`, e-mails `<prefix>-wri@example.com` ...). The organization's seat limit
 * is lifted (it has five people), and the limits named in `unlimited` too.
 */
export async function castWorkspaceRoles(server: TestServer, prefix: string, unlimited: ReadonlyArray<keyof PlanLimits> = []): Promise<WorkspaceCast> {
  const owner = await registerOwner(server, `${prefix}-org`);
  const overrides = Object.fromEntries(['users', ...unlimited].map((limit) => [limit, null]));
  await setQuotaOverrides(server.platform.identity, 'test-admin', owner.tenant_id, { overrides, reason: 'test suite' }, systemContext('test'));
  const member = async (role: 'admin' | 'member', short: string): Promise<Account> =>
    joinAs(server, await registerOwner(server, `${prefix}-${short}-home`, `${prefix}-${short}@example.com`), owner.tenant_id, role);
  const admin = await member('admin', 'adm');
  const writer = await member('member', 'wri');
  const reader = await member('member', 'rea');
  const stranger = await member('member', 'str');
  const outsider = await registerOwner(server, `${prefix}-other-org`);
  const workspaceId = await defaultWorkspace(server, owner);
  const foreignWorkspaceId = await defaultWorkspace(server, outsider);
  const otherWorkspaceId = (await gql(server, 'mutation { create_workspace(name: "Internal") { id } }', {}, owner.token)).json.data.create_workspace.id as string;
  for (const [name, account, canWrite] of [['Writers', writer, true], ['Readers', reader, false]] as const) {
    const team = await server.request('POST', '/api/v1/org/teams', { headers: authorizedAs(admin), body: { name } });
    await server.request('PUT', `/api/v1/org/teams/${team.json.id}/members`, { headers: authorizedAs(admin), body: { members: [{ user_id: account.user_id, can_write_documents: canWrite }] } });
    const granted = await server.request('PUT', `/api/v1/org/teams/${team.json.id}/workspaces`, { headers: authorizedAs(admin), body: { workspace_ids: [workspaceId] } });
    expect(granted.status, granted.text).to.equal(200);
  }
  return { owner, admin, writer, reader, stranger, outsider, workspaceId, otherWorkspaceId, foreignWorkspaceId };
}
