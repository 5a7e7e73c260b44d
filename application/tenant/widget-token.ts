// The tenant's publishable widget token: made here, stored sealed and as a keyed digest.

import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import { workspaceStream } from '../../domain/workspace/workspace';
import { workspaceAggregate } from '../workspace/workspaces';
import type { Secrets } from '../ports/identity';
import type { ReadYourWritesDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { rotateWidgetToken } from './tenant-commands';

/** The tenant command, the secrets that make, seal and digest the token, and read-your-writes. */
export type WidgetTokenDependencies = CommandDependencies & ReadYourWritesDependencies & { secrets: Pick<Secrets, 'randomToken' | 'digest' | 'seal'> };

export const WIDGET_TOKEN_PREFIX = 'wt_';

/** A new publishable widget token for the tenant; the old one stops working. */
export async function rotateTenantWidgetToken(deps: WidgetTokenDependencies, tenantId: string, context: RequestContext): Promise<string> {
  const token = `${WIDGET_TOKEN_PREFIX}${deps.secrets.randomToken(24)}`;
  const result = await rotateWidgetToken(deps, tenantId, { token_hash: deps.secrets.digest(token), token_sealed: deps.secrets.seal(token) }, context);
  await deps.readYourWrites(result.position);
  return token;
}

/**
 * What every new tenant gets besides itself: its default workspace and a first widget token,
 * each keyed by `step` so that a repeated or resumed creation appends nothing twice. Answers
 * the commit position of the last write.
 */
export async function openTenantDefaults(
  deps: CommandDependencies & { secrets: Pick<Secrets, 'randomToken' | 'digest' | 'seal'> },
  tenant: { tenantId: string; workspaceId: string },
  step: (name: string) => string,
  context: RequestContext,
): Promise<number | null> {
  const { tenantId, workspaceId } = tenant;
  await handleCommand(
    deps,
    workspaceAggregate,
    workspaceStream(workspaceId),
    { type: 'CreateWorkspace', data: { tenant_id: tenantId, workspace_id: workspaceId, name: 'Default', is_default: true } },
    context,
    { idempotencyKey: step('workspace') },
  );
  const token = `${WIDGET_TOKEN_PREFIX}${deps.secrets.randomToken(24)}`;
  const rotated = await rotateWidgetToken(deps, tenantId, { token_hash: deps.secrets.digest(token), token_sealed: deps.secrets.seal(token) }, context, { tenantId, idempotencyKey: step('widget-token') });
  return rotated.position;
}
