// A widget visitor's chat turn (spec 4.4): the same turn as POST /api/v1/chat, asked by the
// visitor as a public channel's asker (application/chat/chat.ts `publicChannelAsker`): the
// conversation is of channel `widget`, in the workspace the tenant's admins chose for the
// widget, and the visitor continues only the conversations they started. The message quota is
// checked inside openTurn (429 `quota_exceeded`). Used by POST /api/v1/widget/chat and /ws/chat.

import { notFound } from '../../domain/shared/errors';
import { type ChatDependencies, type OpenTurn, type TurnOptions, openTurn, publicChannelAsker } from '../chat/chat';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { listTenantWorkspaces } from '../workspace/workspaces';
import { type Visitor, type WidgetPrincipal, visitorContext } from './widget-access';

/** What a visitor sends for one turn. */
export interface WidgetTurnRequest {
  message: string;
  /** The visitor's conversation to continue; absent or null: a new one. */
  conversation_id?: string | null;
  /** identify({token, session}) of the host page: forwarded to the turn's tool calls, recorded sealed. */
  end_user?: { token?: string | null; session?: string | null };
}

/** The workspace the widget answers from: `settings.workspace_id`, or the tenant's default workspace when null. */
export async function widgetWorkspaceOf(deps: ReadModelDependencies, widget: Pick<WidgetPrincipal, 'tenant_id' | 'settings'>): Promise<string> {
  if (widget.settings.workspace_id !== null) return widget.settings.workspace_id;
  const fallback = (await listTenantWorkspaces(deps, widget.tenant_id)).find((workspace) => workspace.is_default);
  // Every organization gets its default workspace when it registers.
  if (!fallback) throw notFound('workspace_not_found', 'this organization has no default workspace for its widget to answer from');
  return fallback.id;
}

/** Opens the visitor's turn (checks, quota, conversation, the user's message); `answerTurn` streams the answer. */
export async function openWidgetTurn(
  deps: ChatDependencies,
  widget: Pick<WidgetPrincipal, 'tenant_id' | 'settings'>,
  visitor: Visitor,
  request: WidgetTurnRequest,
  context: RequestContext,
  options: TurnOptions = {},
): Promise<OpenTurn> {
  const workspaceId = await widgetWorkspaceOf(deps, widget);
  return openTurn(
    deps,
    publicChannelAsker(widget.tenant_id, visitor.party, 'widget', workspaceId),
    { message: request.message, conversation_id: request.conversation_id ?? null, end_user: request.end_user },
    visitorContext(widget, visitor, context),
    options,
  );
}
