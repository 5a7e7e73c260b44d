// Widget visitors for the widget route suites: the tenant's widget token and settings, a
// visitor's headers, and conversations a visitor holds through the chat use case itself (a
// public channel's asker in the widget's workspace), as the widget's chat route records them.

import { randomBytes } from 'node:crypto';
import { type ChatResult, chat, publicChannelAsker } from '../../application/chat/chat';
import { handleCommand } from '../../application/command-handling/handle-command';
import { visitorContext, visitorOf } from '../../application/widget/widget-access';
import { DEFAULT_WIDGET_SETTINGS, type WidgetSettings, widgetConfigDecider, widgetConfigEvents, widgetConfigStream } from '../../domain/widget-config/widget-config';
import { userContext } from './context';
import { type Account, gql, widgetTokenOf } from './identity';
import type { TestServer } from './server';

/** A visitor id as the widget makes one: 16 random bytes, base64url. */
export const newVisitorId = (): string => randomBytes(16).toString('base64url');

/** The headers of a visitor's request with a widget token. */
export const asVisitor = (token: string, visitorId: string, extra: Record<string, string> = {}): Record<string, string> => ({
  authorization: `Bearer ${token}`,
  'x-widget-visitor': visitorId,
  ...extra,
});

export interface TenantWidget {
  token: string;
  tenant_id: string;
  workspace_id: string;
}

/** The tenant's widget: its current token and default workspace. */
export async function widgetOf(server: TestServer, owner: Account): Promise<TenantWidget> {
  const workspaces = await server.request('GET', '/api/v1/org/workspaces', { headers: { authorization: `Bearer ${owner.token}` } });
  return { token: await widgetTokenOf(server, owner), tenant_id: owner.tenant_id, workspace_id: workspaces.json.items[0].id };
}

/** Rotates the widget token as an admin does in the console; answers the new one. */
export async function rotateWidgetToken(server: TestServer, owner: Account): Promise<string> {
  const rotated = await gql(server, 'mutation { rotate_widget_token { widget_token } }', {}, owner.token);
  return rotated.json.data.rotate_widget_token.widget_token;
}

/** Changes the widget's settings through its aggregate (the settings route is another part of #15). */
export async function configureWidget(server: TestServer, tenantId: string, changes: Partial<WidgetSettings>): Promise<void> {
  const result = await handleCommand(
    server.platform.commands,
    { decider: widgetConfigDecider, events: widgetConfigEvents },
    widgetConfigStream(tenantId),
    { type: 'ConfigureWidget', data: { tenant_id: tenantId, changes } },
    userContext({ tenant_id: tenantId }),
  );
  await server.platform.readYourWrites(result.position);
}

/** How conversations name the visitor (the widget's defaults: no verified identity). */
export function visitorPartyOf(server: TestServer, visitorId: string): { kind: 'end_user'; id: string } {
  // An anonymous visitor's name does not depend on the organization.
  const visitor = visitorOf({ secrets: server.platform.secrets }, { tenant_id: 'any', settings: DEFAULT_WIDGET_SETTINGS, identity_secret: null }, { visitor_id: visitorId });
  return visitor.party as { kind: 'end_user'; id: string };
}

/** One chat turn of the visitor in the widget's workspace: starts a conversation, or continues `conversationId`. */
export async function visitorAsks(server: TestServer, widget: TenantWidget, visitorId: string, message: string, conversationId?: string): Promise<ChatResult> {
  const visitor = visitorOf({ secrets: server.platform.secrets }, { tenant_id: widget.tenant_id, settings: DEFAULT_WIDGET_SETTINGS, identity_secret: null }, { visitor_id: visitorId });
  const asker = publicChannelAsker(widget.tenant_id, visitor.party, 'widget', widget.workspace_id);
  const context = visitorContext({ tenant_id: widget.tenant_id }, visitor, userContext({ tenant_id: widget.tenant_id }));
  const result = await chat(server.platform.chat, asker, { message, conversation_id: conversationId ?? null }, context);
  await server.platform.readYourWrites(await server.platform.storedEvents.headPosition());
  return result;
}
