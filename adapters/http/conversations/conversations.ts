// Conversation routes of spec 4.6 under /api/v1/conversations (user token; docs/conversations.md):
// the list with its filters, one conversation (ETag), rename, delete and status (If-Match),
// the messages, a human agent's reply (honours Idempotency-Key) and feedback on an answer.
// Who sees and may change what is application/conversation/conversations.ts; a conversation
// the caller may not see is 404.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import {
  CONVERSATION_SORTS,
  type ConversationFilter,
  type ConversationSort,
  deleteConversation,
  eraseConversation,
  getConversation,
  giveFeedback,
  listConversations,
  listMessages,
  postAgentReply,
  renameConversation,
  setConversationStatus,
} from '../../../application/conversation/conversations';
import { type EndUser, endUserPartyIds } from '../../../application/personal-data/end-users';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { CHANNELS, CONVERSATION_STATUSES, ConversationStatus, conversationSubject } from '../../../domain/conversation/conversation';
import { invalid } from '../../../domain/shared/errors';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials } from '../middleware/authorize';
import { answerHoldsPersonalDataOf, idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import { pageQuery } from '../pagination';
import { requestContextOf } from '../request-context';
import { isCalendarDay } from '../../../domain/shared/calendar-day';

export const RenameConversationBody = t.type({ title: t.string }, 'RenameConversationBody');
export const ConversationStatusBody = t.type({ status: ConversationStatus }, 'ConversationStatusBody');
export const AgentReplyBody = t.type({ text: t.string }, 'AgentReplyBody');
export const FeedbackBody = t.type({ rating: t.keyof({ up: null, down: null }, 'FeedbackRating'), comment: t.union([t.string, t.undefined]) }, 'FeedbackBody');

/** Longest `q` and `workspace_id` accepted: longer than any title or id. */
export const MAX_FILTER_LENGTH = 200;

type Query = Record<string, string | string[] | undefined>;

function oneValue(query: Query, field: string): string | undefined {
  const value = query[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.trim().length === 0 || value.length > MAX_FILTER_LENGTH) {
    throw invalid('invalid_request', `${field}: expected one value of 1 to ${MAX_FILTER_LENGTH} characters`, field);
  }
  return value;
}

function oneOf<A extends string>(query: Query, field: string, values: readonly A[]): A | undefined {
  const value = oneValue(query, field);
  if (value === undefined) return undefined;
  if (!(values as readonly string[]).includes(value)) throw invalid('invalid_request', `${field}: expected one of ${values.join(', ')}`, field);
  return value as A;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/**
 * A time bound: a calendar day (`2026-03-01`, UTC) or a date-time with its offset. A day as
 * `to` includes the whole day: the bound is the next midnight, exclusive.
 */
function timeBound(query: Query, field: 'from' | 'to'): { at: string; exclusive: boolean } | undefined {
  const value = oneValue(query, field);
  if (value === undefined) return undefined;
  const expected = () => invalid('invalid_request', `${field}: expected a day (YYYY-MM-DD) or an ISO 8601 date-time with its offset`, field);
  if (DAY.test(value)) {
    if (!isCalendarDay(value)) throw expected();
    const at = Date.parse(`${value}T00:00:00Z`);
    return field === 'from' ? { at: new Date(at).toISOString(), exclusive: false } : { at: new Date(at + 86_400_000).toISOString(), exclusive: true };
  }
  const at = Date.parse(value);
  if (!DATE_TIME.test(value) || Number.isNaN(at) || !isCalendarDay(value.slice(0, 10))) throw expected();
  return { at: new Date(at).toISOString(), exclusive: false };
}

/** The list's filters from the query; 400 `invalid_request` naming a bad one. */
export function conversationFilterOf(query: Query): ConversationFilter {
  const filter: ConversationFilter = {};
  const status = oneOf(query, 'status', CONVERSATION_STATUSES);
  if (status) filter.status = status;
  const channel = oneOf(query, 'channel', CHANNELS);
  if (channel) filter.channel = channel;
  const workspaceId = oneValue(query, 'workspace_id');
  if (workspaceId !== undefined) filter.workspace_id = workspaceId;
  const q = oneValue(query, 'q');
  if (q !== undefined) filter.q = q;
  const sort = oneOf<ConversationSort>(query, 'sort', CONVERSATION_SORTS);
  if (sort) filter.sort = sort;
  const from = timeBound(query, 'from');
  const to = timeBound(query, 'to');
  if (from) filter.from = from.at;
  if (to) {
    filter.to = to.at;
    if (to.exclusive) filter.toExclusive = true;
  }
  if (from && to && (to.exclusive ? from.at >= to.at : from.at > to.at)) throw invalid('invalid_request', 'from: must not be after to', 'from');
  return filter;
}

/** `verified_user_id` or `whatsapp_number` (one of them), null for neither. */
function endUserOf(query: Query): EndUser | null {
  const userId = oneValue(query, 'verified_user_id');
  const number = oneValue(query, 'whatsapp_number');
  if (userId !== undefined && number !== undefined) throw invalid('invalid_request', 'whatsapp_number: filter by verified_user_id or by whatsapp_number, not both', 'whatsapp_number');
  if (userId !== undefined) return { verified_user_id: userId };
  return number === undefined ? null : { whatsapp_number: number };
}

export function conversationsRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1/conversations' });
  router.use(authenticateUserRecordingDenials(identity, denials));

  router.get('/', async (ctx) => {
    const filter = conversationFilterOf(ctx.query);
    // A customer as the organization knows them: the digests its conversations know them by.
    const endUser = endUserOf(ctx.query);
    if (endUser !== null) filter.started_by_end_user = endUserPartyIds(identity.secrets, ctx.state.principal.tenant_id, endUser);
    ctx.body = await listConversations(identity, ctx.state.principal, filter, pageQuery(ctx.query));
  });

  router.get('/:id', async (ctx) => {
    answerVersioned(ctx, await getConversation(identity, ctx.state.principal, ctx.params.id));
  });

  router.patch('/:id', async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const { title } = decodeBody(RenameConversationBody, ctx.request.body);
    answerVersioned(ctx, await renameConversation(identity, ctx.state.principal, ctx.params.id, title, requestContextOf(ctx), preconditions));
  });

  router.delete('/:id', async (ctx) => {
    await deleteConversation(identity, ctx.state.principal, ctx.params.id, requestContextOf(ctx), preconditionsOf(ctx));
    ctx.status = 204;
  });

  router.post('/:id/erase', async (ctx) => {
    ctx.body = await eraseConversation(identity, ctx.state.principal, ctx.params.id, requestContextOf(ctx));
  });

  router.put('/:id/status', async (ctx) => {
    const preconditions = preconditionsOf(ctx);
    const { status } = decodeBody(ConversationStatusBody, ctx.request.body);
    answerVersioned(ctx, await setConversationStatus(identity, ctx.state.principal, ctx.params.id, status, requestContextOf(ctx), preconditions));
  });

  router.get('/:id/messages', async (ctx) => {
    ctx.body = await listMessages(identity, ctx.state.principal, ctx.params.id, pageQuery(ctx.query));
  });

  router.post('/:id/messages', idempotentCreation(identity), async (ctx) => {
    const { text } = decodeBody(AgentReplyBody, ctx.request.body);
    ctx.body = await postAgentReply(identity, ctx.state.principal, ctx.params.id, text, requestContextOf(ctx), { idempotencyKey: idempotencySeedOf(ctx) });
    answerHoldsPersonalDataOf(ctx, conversationSubject(ctx.params.id));
    ctx.status = 201;
  });

  router.post('/:id/messages/:message_id/feedback', async (ctx) => {
    const { rating, comment } = decodeBody(FeedbackBody, ctx.request.body);
    ctx.body = await giveFeedback(identity, ctx.state.principal, ctx.params.id, ctx.params.message_id, { rating, comment }, requestContextOf(ctx));
    ctx.status = 201;
  });

  return router;
}
