// Conversations (spec 4.6): the list, one conversation, its messages, and what people do with
// a conversation: rename it, delete it (softly: its events stay for audit), erase it (its
// texts made unreadable for good: docs/personal-data.md), set its status, reply as a human
// agent (which pauses the assistant) and give feedback on an answer.
// docs/conversations.md states the rules; the chat turns themselves are application/chat.
//
// Who sees a conversation: an Admin or Owner every conversation of the tenant; a member the
// conversations they started and those of the workspaces their teams may read
// (application/workspace/workspace-access.ts). Anything else is 404, never 403, so a member
// learns nothing of conversations they may not see. Whoever sees one may read its messages,
// set its status, reply as an agent and give feedback; renaming and deleting it is for the
// member who started it and for admins (403 `conversation_starter_only` for other members).
//
// A conversation's version (its ETag) is its stream's revision; rename, status and delete
// given the version the client saw (If-Match) append only at that revision (412 otherwise).
// Writes check visibility on the write model (the stream), so a conversation the read models
// do not show yet can be acted on; answers wait for the read models (read-your-writes).

import {
  type Contact,
  type ConversationCommand,
  type ConversationEvent,
  type ConversationState,
  type ConversationStatus,
  type LiveConversation,
  type Channel,
  type Party,
  conversationDecider,
  conversationEvents,
  conversationStream,
  conversationSubject,
} from '../../domain/conversation/conversation';
import { ROLE_RANK } from '../../domain/membership/membership';
import { type DomainError, forbidden, notFound } from '../../domain/shared/errors';
import { CONVERSATIONS, CONVERSATION_MESSAGES, type ConversationDocument, type ConversationMessageDocument, type MessageRole, conversationTitleKey } from '../../projections/conversations';
import { type Aggregate, type CommandDependencies, type CommandResult, type HandleOptions, handleCommand, loadAggregate } from '../command-handling/handle-command';
import { type Collection, DEFAULT_PAGE_SIZE, type FieldCondition, type FindOptions, InvalidCursorError, type Page, type Where, encodeCursor, queryKeyOf } from '../ports/read-store';
import { type Principal, actingContext } from '../session/sessions';
import { ReadModelBehindError, type ReadModelDependencies, type ReadYourWritesDependencies, type Written, readBackChange, requireApplied } from '../shared/read-models';
import type { Secrets } from '../ports/identity';
import type { PersonalDataVault } from '../ports/personal-data';
import { eraseLeadsOf, eraseToolCallsOf, eraseWhatsAppOf } from './conversation-erasure';
import type { RequestContext } from '../shared/request-context';
import { type Versioned, type WritePreconditions, expectedRevisionOf, versionOfRevision } from '../shared/versions';
import { workspaceAccess } from '../workspace/workspace-access';

/** Conversation commands and the read models the answers come from. */
export type ConversationDependencies = CommandDependencies & ReadModelDependencies & ReadYourWritesDependencies;

export const conversationAggregate: Aggregate<ConversationCommand, ConversationEvent, ConversationState> = { decider: conversationDecider, events: conversationEvents };

/** Who asks: what visibility depends on. */
export type Viewer = Pick<Principal, 'tenant_id' | 'user_id' | 'role'>;

/** A conversation as the API shows it. */
export interface ConversationView {
  id: string;
  workspace_id: string | null;
  channel: Channel;
  title: string;
  status: ConversationStatus;
  /** True while handed off: the assistant answers nothing until the status is set back to open. */
  assistant_paused: boolean;
  started_by: Party;
  /** The end user on a messaging channel (a WhatsApp sender's number and profile name); null for other channels. */
  contact: Contact | null;
  /** The host site's user id of the verified widget visitor who started it; null for any other starter. */
  verified_user_id: string | null;
  started_at: string;
  last_message_at: string | null;
  last_activity_at: string;
  message_count: number;
  last_message_preview: string | null;
  status_changed_at: string | null;
  updated_at: string;
}

/** A message as the API shows it. */
export interface MessageView {
  id: string;
  conversation_id: string;
  role: MessageRole;
  text: string;
  citations: ConversationMessageDocument['citations'];
  author: Party | null;
  reply_to: string | null;
  created_at: string;
  answered_from_knowledge: boolean | null;
  model: string | null;
  latency_ms: number | null;
  usage: ConversationMessageDocument['usage'];
  error: ConversationMessageDocument['error'];
  /** A tool step (role `tool`): the tool, the call and its status; null for other messages. */
  tool: ConversationMessageDocument['tool'];
  feedback_rating: 'up' | 'down' | null;
}

export interface FeedbackView {
  conversation_id: string;
  message_id: string;
  rating: 'up' | 'down';
  comment: string;
  given_by: Party;
  given_at: string;
}

export const CONVERSATION_SORTS = ['started_at', 'last_activity_at'] as const;
export type ConversationSort = (typeof CONVERSATION_SORTS)[number];

export interface ConversationFilter {
  status?: ConversationStatus;
  channel?: Channel;
  workspace_id?: string;
  /** Inclusive lower bound on started_at (ISO 8601). */
  from?: string;
  /** Bound on started_at (ISO 8601): inclusive, or exclusive with `toExclusive`. */
  to?: string;
  toExclusive?: boolean;
  /** A case-insensitive prefix of the title. */
  q?: string;
  /** Only those an end user started, by their party ids (application/personal-data/end-users.ts). */
  started_by_end_user?: readonly string[];
  /** Newest first by this field (default started_at). */
  sort?: ConversationSort;
}

export const conversationView = (doc: ConversationDocument): ConversationView => ({
  id: doc.id,
  workspace_id: doc.workspace_id,
  channel: doc.channel,
  title: doc.title,
  status: doc.status,
  assistant_paused: doc.status === 'handed_off',
  started_by: doc.started_by,
  contact: doc.contact ?? null,
  verified_user_id: doc.verified_user_id ?? null,
  started_at: doc.started_at,
  last_message_at: doc.last_message_at,
  last_activity_at: doc.last_activity_at,
  message_count: doc.message_count,
  last_message_preview: doc.last_message_preview,
  status_changed_at: doc.status_changed_at,
  updated_at: doc.updated_at,
});

export const messageView = (doc: ConversationMessageDocument): MessageView => ({
  id: doc.id,
  conversation_id: doc.conversation_id,
  role: doc.role,
  text: doc.text,
  citations: doc.citations,
  author: doc.author,
  reply_to: doc.reply_to,
  created_at: doc.created_at,
  answered_from_knowledge: doc.answered_from_knowledge,
  model: doc.model,
  latency_ms: doc.latency_ms,
  usage: doc.usage,
  error: doc.error,
  // Messages recorded before tool steps existed have no such field.
  tool: doc.tool ?? null,
  feedback_rating: doc.feedback_rating,
});

const conversationNotFound = (): DomainError => notFound('conversation_not_found', 'no such conversation');

// ------------------------------------------------------------------------------ visibility

/** What a viewer may see: everything of the tenant, or their own and those of readable workspaces. */
export interface ConversationVisibility {
  everything: boolean;
  workspaces: ReadonlySet<string>;
}

const isAdmin = (viewer: Viewer): boolean => ROLE_RANK[viewer.role] >= ROLE_RANK.admin;

export async function conversationVisibility(deps: ReadModelDependencies, viewer: Viewer): Promise<ConversationVisibility> {
  if (isAdmin(viewer)) return { everything: true, workspaces: new Set() };
  return { everything: false, workspaces: (await workspaceAccess(deps, viewer)).readable };
}

/** Whether `viewer` may see the conversation (the rule at the top of this file). */
export function canSeeConversation(
  visibility: ConversationVisibility,
  viewer: Viewer,
  conversation: { tenant_id: string; workspace_id: string | null; started_by: Party },
): boolean {
  if (conversation.tenant_id !== viewer.tenant_id) return false;
  if (visibility.everything) return true;
  if (conversation.started_by.kind === 'user' && conversation.started_by.id === viewer.user_id) return true;
  return conversation.workspace_id !== null && visibility.workspaces.has(conversation.workspace_id);
}

/**
 * The conversation from its stream, if live and visible to `viewer` (404 otherwise), with the
 * options of a write to it: the revision to append at when the client named a version.
 */
export async function requireVisibleConversation(
  deps: ConversationDependencies,
  viewer: Viewer,
  conversationId: string,
  preconditions: WritePreconditions = {},
): Promise<{ conversation: LiveConversation; options: HandleOptions }> {
  const { state, revision } = await loadAggregate(deps, conversationAggregate, conversationStream(conversationId));
  if (state.status === 'absent' || state.status === 'deleted') throw conversationNotFound();
  if (!canSeeConversation(await conversationVisibility(deps, viewer), viewer, state)) throw conversationNotFound();
  return { conversation: state, options: { expectedRevision: expectedRevisionOf('conversation', preconditions.expectedVersion, revision) } };
}

/** The visible, undeleted conversation's read-model document, or 404. */
async function visibleDocument(deps: ReadModelDependencies, viewer: Viewer, conversationId: string): Promise<ConversationDocument> {
  const doc = await deps.readStore.collection<ConversationDocument>(CONVERSATIONS).get(conversationId);
  if (!doc || doc.deleted || !canSeeConversation(await conversationVisibility(deps, viewer), viewer, doc)) throw conversationNotFound();
  return doc;
}

// ---------------------------------------------------------------------------------- queries

/**
 * The conversations `viewer` sees, newest first by `filter.sort`, filtered. A member's list
 * is the union of two queries (the read store filters by conjunctions only): those they
 * started, and those of the workspaces they may read; both are merged as in mergedPage.
 */
export async function listConversations(deps: ReadModelDependencies, viewer: Viewer, filter: ConversationFilter, page: { limit?: number; cursor?: string }): Promise<Page<ConversationView>> {
  const visibility = await conversationVisibility(deps, viewer);
  const where: Where = { tenant_id: viewer.tenant_id, deleted: false };
  if (filter.status) where.status = filter.status;
  if (filter.channel) where.channel = filter.channel;
  if (filter.from !== undefined || filter.to !== undefined) {
    const range: FieldCondition = {};
    if (filter.from !== undefined) range.gte = filter.from;
    if (filter.to !== undefined) range[filter.toExclusive ? 'lt' : 'lte'] = filter.to;
    where.started_at = range;
  }
  const q = filter.q === undefined ? '' : conversationTitleKey(filter.q.trim());
  if (q !== '') where.title_key = { gte: q, lt: `${q}${PREFIX_END}` };
  if (filter.started_by_end_user !== undefined) where.started_by_end_user_id = { in: filter.started_by_end_user };
  const branches: Where[] = [];
  if (visibility.everything) {
    branches.push(filter.workspace_id === undefined ? where : { ...where, workspace_id: filter.workspace_id });
  } else {
    branches.push({ ...where, started_by_user_id: viewer.user_id, ...(filter.workspace_id === undefined ? {} : { workspace_id: filter.workspace_id }) });
    const workspaces = filter.workspace_id === undefined ? [...visibility.workspaces] : visibility.workspaces.has(filter.workspace_id) ? [filter.workspace_id] : [];
    if (workspaces.length > 0) branches.push({ ...where, workspace_id: { in: workspaces } });
  }
  const collection = deps.readStore.collection<ConversationDocument>(CONVERSATIONS);
  const found = await mergedPage(collection, branches, filter.sort ?? 'started_at', page);
  return { items: found.items.map(conversationView), next_cursor: found.next_cursor };
}

/** One conversation the viewer sees, with its version (ETag); 404 otherwise, deleted ones included. */
export async function getConversation(deps: ReadModelDependencies, viewer: Viewer, conversationId: string): Promise<Versioned<ConversationView>> {
  const doc = await visibleDocument(deps, viewer, conversationId);
  return { value: conversationView(doc), version: versionOfRevision(doc.revision) };
}

/** The messages of a conversation the viewer sees, oldest first. */
export async function listMessages(deps: ReadModelDependencies, viewer: Viewer, conversationId: string, page: { limit?: number; cursor?: string }): Promise<Page<MessageView>> {
  await visibleDocument(deps, viewer, conversationId);
  const found = await deps.readStore
    .collection<ConversationMessageDocument>(CONVERSATION_MESSAGES)
    .find({ where: { conversation_id: conversationId }, sort: { field: 'seq', direction: 'asc' }, ...page });
  return { items: found.items.map(messageView), next_cursor: found.next_cursor };
}

/** Above every character, so `[q, q + PREFIX_END)` holds exactly the texts that start with q (stores compare UTF-8 bytes). */
const PREFIX_END = '\u{10FFFF}';
const MERGED_CURSOR = 'conversations';

function decodeMergedCursor(sort: ConversationSort, cursor: string): { value: string; id: string } {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(decoded) && decoded.length === 4 && decoded[0] === MERGED_CURSOR && decoded[1] === sort && typeof decoded[2] === 'string' && typeof decoded[3] === 'string') {
      return { value: decoded[2], id: decoded[3] };
    }
  } catch {
    // falls through to the typed error
  }
  throw new InvalidCursorError();
}

/**
 * One page of the union of `branches`, newest first by `sort`, ties by id descending (the
 * stores' order). Each branch is asked for a whole page after the last conversation shown,
 * whichever branch it came from; the first `limit` of the merge never pass the last item of a
 * branch that has more (that branch alone gave `limit`), so nothing is skipped or repeated.
 * The cursor names the sort, so it cannot be replayed against another order.
 */
async function mergedPage(collection: Collection<ConversationDocument>, branches: readonly Where[], sort: ConversationSort, page: { limit?: number; cursor?: string }): Promise<Page<ConversationDocument>> {
  const limit = page.limit ?? DEFAULT_PAGE_SIZE;
  const after = page.cursor === undefined ? null : decodeMergedCursor(sort, page.cursor);
  const order = { field: sort, direction: 'desc' } as const;
  const pages = await Promise.all(
    branches.map((where) => {
      const options: FindOptions = { where, sort: order, limit };
      const cursor = after ? encodeCursor(queryKeyOf(CONVERSATIONS, options), after.value, after.id) : undefined;
      return collection.find({ ...options, cursor });
    }),
  );
  const merged = new Map<string, ConversationDocument>();
  for (const found of pages) for (const doc of found.items) merged.set(doc.id, doc);
  const newerFirst = (a: ConversationDocument, b: ConversationDocument): number => (a[sort] > b[sort] || (a[sort] === b[sort] && a.id > b.id) ? -1 : 1);
  const items = [...merged.values()].sort(newerFirst);
  const shown = items.slice(0, limit);
  const more = items.length > shown.length || pages.some((found) => found.next_cursor !== null);
  const last = shown[shown.length - 1];
  return { items: shown, next_cursor: more && last ? Buffer.from(JSON.stringify([MERGED_CURSOR, sort, last[sort], last.id])).toString('base64url') : null };
}

// -------------------------------------------------------------------------------- use cases

async function onConversation(
  deps: ConversationDependencies,
  principal: Principal,
  conversationId: string,
  command: ConversationCommand,
  context: RequestContext,
  options: HandleOptions = {},
): Promise<CommandResult<ConversationEvent>> {
  return handleCommand(deps, conversationAggregate, conversationStream(conversationId), command, actingContext(principal, context), options);
}

/** The conversation as read once the read models show the write. */
async function answered(deps: ConversationDependencies, principal: Principal, conversationId: string, written: Written | null): Promise<Versioned<ConversationView>> {
  return readBackChange(deps, written, 'the change of the conversation', () => getConversation(deps, principal, conversationId));
}

/** The person a member is in a conversation (an agent, a feedback's giver): the member, also when an admin impersonates them. */
const personOf = (principal: Principal): Party => ({ kind: 'user', id: principal.user_id });

/** Renaming and deleting: the member who started it, or an admin. */
function requireStarterOrAdmin(principal: Principal, conversation: LiveConversation): void {
  if (isAdmin(principal)) return;
  if (conversation.started_by.kind === 'user' && conversation.started_by.id === principal.user_id) return;
  throw forbidden('conversation_starter_only', 'only the member who started this conversation, or an admin, may rename or delete it');
}

/** Renames a conversation (400 `invalid_conversation` naming `title` for a bad one). */
export async function renameConversation(
  deps: ConversationDependencies,
  principal: Principal,
  conversationId: string,
  title: string,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<ConversationView>> {
  const { conversation, options } = await requireVisibleConversation(deps, principal, conversationId, preconditions);
  requireStarterOrAdmin(principal, conversation);
  const result = await onConversation(deps, principal, conversationId, { type: 'RenameConversation', data: { title } }, context, options);
  return answered(deps, principal, conversationId, result);
}

/** Deletes a conversation softly: it leaves every list and read, its events stay for audit. */
export async function deleteConversation(deps: ConversationDependencies, principal: Principal, conversationId: string, context: RequestContext, preconditions: WritePreconditions = {}): Promise<void> {
  const { conversation, options } = await requireVisibleConversation(deps, principal, conversationId, preconditions);
  requireStarterOrAdmin(principal, conversation);
  const result = await onConversation(deps, principal, conversationId, { type: 'DeleteConversation', data: {} }, context, options);
  await deps.readYourWrites(result.position);
}

/** What an erasure answers. */
export interface ErasureView {
  id: string;
  erased_at: string;
}

/**
 * Erases a conversation (docs/personal-data.md, "Erasure"): records ConversationErased and
 * deletes the key its texts are sealed under, so that they cannot be read anywhere again, in
 * the history or by a rebuild; the conversation is deleted too, and what it reached is erased:
 * the tool calls of its turns, its WhatsApp messages and replies, the leads left in it
 * (conversation-erasure.ts). Owners and admins only (403
 * `insufficient_role`), of a live or deleted conversation of their organization (404
 * otherwise). Erasing again answers the first erasure.
 */
export async function eraseConversation(deps: ConversationErasureUseCaseDependencies, principal: Principal, conversationId: string, context: RequestContext): Promise<ErasureView> {
  if (!isAdmin(principal)) throw forbidden('insufficient_role', 'only an owner or admin erases a conversation');
  return eraseConversationOf(deps, principal.tenant_id, conversationId, actingContext(principal, context));
}

export type ConversationErasureUseCaseDependencies = ConversationDependencies & { personalData: PersonalDataVault; secrets: Pick<Secrets, 'digest'> };

/**
 * The erasure itself, for the route above and for the operator acting on an organization's
 * behalf (`npm run cli -- erase conversation`: also for an organization that was deleted, whose
 * admins can no longer sign in). Read on the write model: a deleted conversation is in no
 * read model.
 */
export async function eraseConversationOf(deps: ConversationErasureUseCaseDependencies, tenantId: string, conversationId: string, context: RequestContext): Promise<ErasureView> {
  const stream = conversationStream(conversationId);
  const { state } = await loadAggregate(deps, conversationAggregate, stream);
  if (state.status === 'absent' || state.tenant_id !== tenantId) throw conversationNotFound();
  const result = await handleCommand(deps, conversationAggregate, stream, { type: 'EraseConversation', data: {} }, context);
  const erased = result.events.find((event) => event.type === 'ConversationErased');
  // The sagas personal_data_erasure and conversation_erasure do these too, for a process that stops right here.
  await deps.personalData.erase(conversationSubject(conversationId));
  // What it reached, from its stream and from read models once they have seen everything up to
  // the erasure: its tool calls, its WhatsApp messages and replies, its leads.
  await requireApplied(deps, result.position, 'the erasure of the conversation', () => deps.readStore.collection<ConversationDocument>(CONVERSATIONS).get(conversationId));
  await eraseToolCallsOf(deps, tenantId, conversationId, context);
  await eraseWhatsAppOf(deps, tenantId, conversationId, context);
  await eraseLeadsOf(deps, tenantId, conversationId, context);
  let erasedAt = erased?.type === 'ConversationErased' ? erased.data.erased_at : null;
  if (erasedAt === null) {
    // Erased before (a repeated request, or one that came in between): the first erasure's time.
    const { state: now } = await loadAggregate(deps, conversationAggregate, stream);
    erasedAt = now.status === 'deleted' ? now.erased_at : null;
  }
  if (erasedAt === null) throw new Error(`conversation ${conversationId}: erased, yet no time of erasure`);
  return { id: conversationId, erased_at: erasedAt };
}

/** Sets the status along the allowed transitions (409 `invalid_status_transition` otherwise); the same status again changes nothing. */
export async function setConversationStatus(
  deps: ConversationDependencies,
  principal: Principal,
  conversationId: string,
  status: ConversationStatus,
  context: RequestContext,
  preconditions: WritePreconditions = {},
): Promise<Versioned<ConversationView>> {
  const { options } = await requireVisibleConversation(deps, principal, conversationId, preconditions);
  const result = await onConversation(deps, principal, conversationId, { type: 'ChangeConversationStatus', data: { status } }, context, options);
  return answered(deps, principal, conversationId, result);
}

/**
 * A human agent's reply, the caller as the agent. An open or pending conversation becomes
 * handed_off with it: the assistant stays paused until someone sets the status back to open.
 * Under an idempotency key the message id and events derive from the key, so a retry that
 * takes over a crashed request finds the reply it made instead of sending another.
 */
export async function postAgentReply(
  deps: ConversationDependencies,
  principal: Principal,
  conversationId: string,
  text: string,
  context: RequestContext,
  options: { idempotencyKey?: string } = {},
): Promise<{ message: MessageView; conversation: ConversationView }> {
  await requireVisibleConversation(deps, principal, conversationId);
  const key = options.idempotencyKey === undefined ? undefined : `${options.idempotencyKey}:agent-reply`;
  const messageId = key === undefined ? deps.ids.newId() : deps.ids.fromKey(key);
  const result = await onConversation(deps, principal, conversationId, { type: 'PostAgentReply', data: { message_id: messageId, text, agent: personOf(principal) } }, context, {
    idempotencyKey: key,
  });
  const conversation = await answered(deps, principal, conversationId, result);
  const message = await deps.readStore.collection<ConversationMessageDocument>(CONVERSATION_MESSAGES).get(messageId);
  if (!message) throw new ReadModelBehindError('the reply');
  return { message: messageView(message), conversation: conversation.value };
}

/**
 * Feedback on one of the assistant's answers, by anyone who sees the conversation: one per
 * answer (409 `feedback_given` for a second), 404 `message_not_found` for anything that is not
 * an answer of this conversation.
 */
export async function giveFeedback(
  deps: ConversationDependencies,
  principal: Principal,
  conversationId: string,
  messageId: string,
  input: { rating: 'up' | 'down'; comment?: string },
  context: RequestContext,
): Promise<FeedbackView> {
  await requireVisibleConversation(deps, principal, conversationId);
  const result = await onConversation(
    deps,
    principal,
    conversationId,
    { type: 'GiveFeedback', data: { message_id: messageId, rating: input.rating, comment: input.comment ?? '', given_by: personOf(principal) } },
    context,
  );
  await deps.readYourWrites(result.position);
  const given = result.events.find((event) => event.type === 'FeedbackGiven');
  if (given?.type !== 'FeedbackGiven') throw new Error('GiveFeedback recorded no FeedbackGiven');
  const { message_id, rating, comment, given_by, given_at } = given.data;
  return { conversation_id: conversationId, message_id, rating, comment, given_by, given_at };
}

/** How long a conversation's last-message preview is at most (for the API's description). */
export { PREVIEW_LENGTH } from '../../projections/conversations';
