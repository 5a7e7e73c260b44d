// The tenant's publishable widget token: made here, stored sealed and as a keyed digest.

import type { CommandDependencies } from '../command-handling/handle-command';
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
