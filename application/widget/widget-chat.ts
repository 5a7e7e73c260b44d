// A widget visitor's chat (spec 4.4): the turns of POST /api/v1/widget/chat and of /ws/chat,
// the messages of the visitor's own conversations, and clearing the end-user identity the host
// page gave (identify({token, session}) -> clearIdentity()).
//
// A visitor is a public channel's asker (application/chat/chat.ts `publicChannelAsker`): their
// turns start conversations of channel `widget` in the widget's workspace (the one its admins
// chose, or the tenant's default workspace) and continue only the conversations they started
// there. Any other conversation, of another visitor, of the console, of another tenant, is 404
// `conversation_not_found`: its existence is not revealed. Every turn counts against the
// tenant's message quota (429 `quota_exceeded`), as a member's does.

import { type LiveConversation, conversationStream } from '../../domain/conversation/conversation';
import { type DomainError, notFound } from '../../domain/shared/errors';
import { CONVERSATIONS, CONVERSATION_MESSAGES, type ConversationDocument, type ConversationMessageDocument } from '../../projections/conversations';
import { defaultWorkspaceOf } from '../workspace/workspaces';
import { type Asker, type ChatDependencies, type ChatResult, type OpenTurn, type TurnOptions, chat, openTurn, publicChannelAsker } from '../chat/chat';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { conversationAggregate } from '../conversation/conversations';
import type { Page } from '../ports/read-store';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { type Visitor, type WidgetPrincipal, visitorContext } from './widget-access';

/** What a widget turn needs: a chat turn's dependencies. */
export type WidgetChatDependencies = ChatDependencies;

/** One visitor message, as the widget sends it. */
export interface WidgetTurnRequest {
  message: string;
  /** The visitor's conversation to continue; absent or null: a new one. */
  conversation_id?: string | null;
  /** identify({token, session}) of the host page (X-End-User-Token / X-End-User-Session), in clear: sealed on the message, forwarded to tools. */
  end_user?: { token?: string | null; session?: string | null };
}

/** A message of the visitor's conversation as the widget shows it: no author, model or usage. */
export interface WidgetMessageView {
  id: string;
  role: 'user' | 'assistant' | 'agent';
  text: string;
  citations: ConversationMessageDocument['citations'];
  created_at: string;
  /** An answer the assistant could not give (empty text): the widget offers to ask again. */
  failed: boolean;
  /** The visitor's feedback on an answer; null until given. */
  feedback_rating: 'up' | 'down' | null;
}

/** The roles a visitor sees: their messages, the assistant's answers, a person's replies (tool steps stay inside). */
const VISITOR_ROLES = ['user', 'assistant', 'agent'] as const;

/** How many messages `recentVisitorMessages` gives by default (the /ws/chat `ready` frame). */
export const RECENT_MESSAGES = 50;

const conversationNotFound = (): DomainError => notFound('conversation_not_found', 'no such conversation');

/**
 * The workspace the widget answers from: `workspace_id` of its settings, or the tenant's default
 * workspace when that is null (404 `workspace_not_found` when the tenant has none, which only a
 * tenant still being set up can lack).
 */
export async function widgetWorkspaceOf(deps: ReadModelDependencies, widget: Pick<WidgetPrincipal, 'tenant_id' | 'settings'>): Promise<string> {
  if (widget.settings.workspace_id !== null) return widget.settings.workspace_id;
  const fallback = await defaultWorkspaceOf(deps, widget.tenant_id);
  if (fallback === null) throw notFound('workspace_not_found', 'this organization has no default workspace yet');
  return fallback;
}

/** The visitor as a chat asker: conversations of channel `widget` in the widget's workspace, their own only. */
export async function widgetAskerOf(deps: ReadModelDependencies, widget: Pick<WidgetPrincipal, 'tenant_id' | 'settings'>, visitor: Visitor): Promise<Asker> {
  return publicChannelAsker(widget.tenant_id, visitor.party, 'widget', await widgetWorkspaceOf(deps, widget), {
    ...(visitor.user_id === null ? {} : { verified_user_id: visitor.user_id }),
    ...(visitor.legacy_party_id === null ? {} : { legacy_party_id: visitor.legacy_party_id }),
  });
}

const chatRequestOf = (request: WidgetTurnRequest) => ({ message: request.message, conversation_id: request.conversation_id ?? null, end_user: request.end_user });

/**
 * Opens a visitor's turn (application/chat `openTurn`): checks, quota, the conversation (a new
 * widget conversation, or one the visitor started: 404 `conversation_not_found` otherwise), the
 * visitor's message recorded with the visitor as actor. Its answer comes from `answerTurn`.
 */
export async function openWidgetTurn(
  deps: WidgetChatDependencies,
  widget: WidgetPrincipal,
  visitor: Visitor,
  request: WidgetTurnRequest,
  context: RequestContext,
  options: TurnOptions = {},
): Promise<OpenTurn> {
  return openTurn(deps, await widgetAskerOf(deps, widget, visitor), chatRequestOf(request), visitorContext(widget, visitor, context), options);
}

/** A whole visitor turn (POST /api/v1/widget/chat as JSON): throws AssistantUnavailableError when the engine fails, after recording it. */
export async function widgetChat(
  deps: WidgetChatDependencies,
  widget: WidgetPrincipal,
  visitor: Visitor,
  request: WidgetTurnRequest,
  context: RequestContext,
  options: TurnOptions = {},
): Promise<ChatResult> {
  return chat(deps, await widgetAskerOf(deps, widget, visitor), chatRequestOf(request), visitorContext(widget, visitor, context), options);
}

/** Whether a conversation is the visitor's own: the widget's tenant, channel `widget`, started by this visitor (under their id of old too). */
export const isVisitorConversation = (conversation: Pick<ConversationDocument, 'tenant_id' | 'channel' | 'started_by'>, widget: Pick<WidgetPrincipal, 'tenant_id'>, visitor: Visitor): boolean =>
  conversation.tenant_id === widget.tenant_id &&
  conversation.channel === 'widget' &&
  conversation.started_by.kind === visitor.party.kind &&
  (conversation.started_by.id === visitor.party.id || (visitor.legacy_party_id !== null && conversation.started_by.id === visitor.legacy_party_id));

/** The visitor's own live conversation from its stream (always current, for writes), or 404 `conversation_not_found`. */
export async function requireVisitorConversation(
  deps: Pick<WidgetChatDependencies, 'eventStore'>,
  widget: Pick<WidgetPrincipal, 'tenant_id'>,
  visitor: Visitor,
  conversationId: string,
): Promise<LiveConversation> {
  const { state } = await loadAggregate(deps, conversationAggregate, conversationStream(conversationId));
  if (state.status === 'absent' || state.status === 'deleted' || !isVisitorConversation(state, widget, visitor)) throw conversationNotFound();
  return state;
}

/** The visitor's own undeleted conversation from the read model, or 404 `conversation_not_found`. */
async function visitorConversationDocument(deps: ReadModelDependencies, widget: Pick<WidgetPrincipal, 'tenant_id'>, visitor: Visitor, conversationId: string): Promise<ConversationDocument> {
  const doc = await deps.readStore.collection<ConversationDocument>(CONVERSATIONS).get(conversationId);
  if (!doc || doc.deleted || !isVisitorConversation(doc, widget, visitor)) throw conversationNotFound();
  return doc;
}

export const widgetMessageView = (doc: ConversationMessageDocument): WidgetMessageView => ({
  id: doc.id,
  role: doc.role as WidgetMessageView['role'],
  text: doc.text,
  citations: doc.citations,
  created_at: doc.created_at,
  failed: doc.error !== null && doc.role === 'assistant',
  feedback_rating: doc.feedback_rating,
});

/** A visitor's conversation as their list shows it. */
export interface VisitorConversationView {
  id: string;
  title: string;
  status: ConversationDocument['status'];
  /** True while a person has it: the assistant answers nothing until it is set back to open. */
  assistant_paused: boolean;
  started_at: string;
  last_activity_at: string;
  message_count: number;
  last_message_preview: string | null;
}

/**
 * The visitor's own widget conversations (deleted ones aside), the most recently active first,
 * in cursor pages: a verified visitor's on any device, their conversations of before ids were
 * digests included; an anonymous visitor's of this browser.
 */
export async function listVisitorConversations(
  deps: ReadModelDependencies,
  widget: Pick<WidgetPrincipal, 'tenant_id'>,
  visitor: Visitor,
  page: { limit?: number; cursor?: string },
): Promise<Page<VisitorConversationView>> {
  const starters = visitor.legacy_party_id === null ? [visitor.party.id] : [visitor.party.id, visitor.legacy_party_id];
  const found = await deps.readStore.collection<ConversationDocument>(CONVERSATIONS).find({
    where: { started_by_end_user_id: { in: starters }, tenant_id: widget.tenant_id, channel: 'widget', deleted: false },
    sort: { field: 'last_activity_at', direction: 'desc' },
    ...page,
  });
  return {
    items: found.items.map((doc) => ({
      id: doc.id,
      title: doc.title,
      status: doc.status,
      assistant_paused: doc.status === 'handed_off',
      started_at: doc.started_at,
      last_activity_at: doc.last_activity_at,
      message_count: doc.message_count,
      last_message_preview: doc.last_message_preview,
    })),
    next_cursor: found.next_cursor,
  };
}

/** The messages of the visitor's own conversation, oldest first, in cursor pages; 404 `conversation_not_found` for any other. */
export async function listVisitorMessages(
  deps: ReadModelDependencies,
  widget: Pick<WidgetPrincipal, 'tenant_id'>,
  visitor: Visitor,
  conversationId: string,
  page: { limit?: number; cursor?: string },
): Promise<Page<WidgetMessageView>> {
  await visitorConversationDocument(deps, widget, visitor, conversationId);
  const found = await deps.readStore
    .collection<ConversationMessageDocument>(CONVERSATION_MESSAGES)
    .find({ where: { conversation_id: conversationId, role: { in: [...VISITOR_ROLES] } }, sort: { field: 'seq', direction: 'asc' }, ...page });
  return { items: found.items.map(widgetMessageView), next_cursor: found.next_cursor };
}

/** The last `limit` messages of the visitor's own conversation, oldest first (a reconnecting widget's history); 404 as above. */
export async function recentVisitorMessages(
  deps: ReadModelDependencies,
  widget: Pick<WidgetPrincipal, 'tenant_id'>,
  visitor: Visitor,
  conversationId: string,
  limit = RECENT_MESSAGES,
): Promise<WidgetMessageView[]> {
  await visitorConversationDocument(deps, widget, visitor, conversationId);
  const found = await deps.readStore
    .collection<ConversationMessageDocument>(CONVERSATION_MESSAGES)
    .find({ where: { conversation_id: conversationId, role: { in: [...VISITOR_ROLES] } }, sort: { field: 'seq', direction: 'desc' }, limit });
  return found.items.reverse().map(widgetMessageView);
}

/**
 * The host page's clearIdentity() (POST /api/v1/widget/identity/clear): the end-user token and
 * session the visitor's messages carried in `conversationId` are no longer forwarded to any tool
 * call, including calls of earlier turns that run later (EndUserIdentityCleared, respected by
 * application/tool-call/end-user.ts). 404 `conversation_not_found` for a conversation that is
 * not the visitor's. Without a conversation nothing is held server-side: the token and session
 * only ever live sealed on a conversation's messages, and the widget stops sending them itself.
 * Nothing is recorded when nothing was held since the last clear.
 */
export async function clearVisitorIdentity(
  deps: WidgetChatDependencies,
  widget: Pick<WidgetPrincipal, 'tenant_id'>,
  visitor: Visitor,
  conversationId: string | null,
  context: RequestContext,
): Promise<void> {
  if (conversationId === null) return;
  await requireVisitorConversation(deps, widget, visitor, conversationId);
  const result = await handleCommand(deps, conversationAggregate, conversationStream(conversationId), { type: 'ClearEndUserIdentity', data: {} }, visitorContext(widget, visitor, context));
  await deps.readYourWrites(result.position);
}
