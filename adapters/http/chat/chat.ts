// Chat routes of spec 4.6, for any member with a user token (a widget token is 401):
//   POST /api/v1/chat          one turn, answered as JSON when the answer is complete;
//   POST /api/v1/chat/stream   the same turn, its answer streamed as Server-Sent Events.
// Both count one message against the plan's message quota. Optional headers X-End-User-Token
// and X-End-User-Session are stored sealed on the user's message and forwarded to the business
// tools the assistant calls in the turn; each such call is a `tool` event of the stream and a
// step in `tool_steps` of the JSON answer.
// Errors found before the answer starts (401, 403, 400, 404, 409, 429) are plain JSON errors;
// once a stream has started, a failure is its `error` event. docs/assistant.md has the format.
//
// POST /chat honours Idempotency-Key (a turn creates a conversation and messages: a retry gets
// the first answer). POST /chat/stream does not: a stream cannot be given again; a client that
// needs a safe retry sends the turn to POST /chat.

import Router from '@koa/router';
import type { ParameterizedContext } from 'koa';
import * as t from 'io-ts';
import type { AccessDenialRecorder } from '../../../application/access-denial/access-denials';
import { AssistantUnavailableError, type ChatDependencies, type ChatRequest, type OpenTurn, answerTurn, askerOf, chat, openTurn } from '../../../application/chat/chat';
import { actingContext } from '../../../application/session/sessions';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { conversationSubject } from '../../../domain/conversation/conversation';
import { NonEmptyTrimmed } from '../../../domain/shared/codecs';
import { decodeBody } from '../decode';
import { HttpError } from '../errors';
import type { AuthenticatedState } from '../middleware/authenticate';
import { authenticateUserRecordingDenials } from '../middleware/authorize';
import { answerHoldsPersonalDataOf, idempotencySeedOf, idempotentCreation } from '../middleware/idempotency';
import type { RequestState } from '../middleware/request-context';
import { requestContextOf } from '../request-context';
import { EventStream } from './event-stream';

const OptionalId = t.union([NonEmptyTrimmed, t.null, t.undefined]);
export const ChatBody = t.type({ message: t.string, conversation_id: OptionalId, workspace_id: OptionalId }, 'ChatBody');

export const END_USER_TOKEN_HEADER = 'X-End-User-Token';
export const END_USER_SESSION_HEADER = 'X-End-User-Session';

export interface ChatRouteOptions {
  /** CHAT_HEARTBEAT_MS: how often a stream sends its keep-alive comment. */
  heartbeatMs: number;
}

/** The code of a model server's failure (502 on JSON, an `error` event on a stream). */
export const ASSISTANT_UNAVAILABLE = 'assistant_unavailable';

function chatRequestOf(ctx: ParameterizedContext<AuthenticatedState>): ChatRequest {
  const body = decodeBody(ChatBody, ctx.request.body);
  return {
    message: body.message,
    conversation_id: body.conversation_id ?? null,
    workspace_id: body.workspace_id ?? null,
    end_user: { token: ctx.get(END_USER_TOKEN_HEADER) || null, session: ctx.get(END_USER_SESSION_HEADER) || null },
  };
}

export function chatRouter(identity: UseCaseDependencies, denials: AccessDenialRecorder, deps: ChatDependencies, options: ChatRouteOptions): Router<AuthenticatedState> {
  const router = new Router<AuthenticatedState>({ prefix: '/api/v1' });
  const user = authenticateUserRecordingDenials(identity, denials);

  router.post('/chat', user, idempotentCreation(identity), async (ctx) => {
    const { principal } = ctx.state;
    const request = chatRequestOf(ctx);
    try {
      const answer = await chat(deps, askerOf(principal), request, actingContext(principal, requestContextOf(ctx)), { idempotencyKey: idempotencySeedOf(ctx) });
      answerHoldsPersonalDataOf(ctx, conversationSubject(answer.conversation_id));
      ctx.body = answer;
    } catch (error) {
      // The model server's fault, not the client's; the failure is on the conversation already.
      if (error instanceof AssistantUnavailableError) throw new HttpError(502, ASSISTANT_UNAVAILABLE, error.message);
      throw error;
    }
  });

  router.post('/chat/stream', user, async (ctx) => {
    const { principal } = ctx.state;
    const turn = await openTurn(deps, askerOf(principal), chatRequestOf(ctx), actingContext(principal, requestContextOf(ctx)));
    await streamTurnAnswer(ctx, deps, turn, options.heartbeatMs);
  });

  return router;
}

/**
 * Streams the answer of an open turn as Server-Sent Events (`delta`, `citation`, `tool`, then
 * `done` or `error`; docs/assistant.md): from here the response is the stream, Koa leaves it to
 * us, and errors become `error` events. Shared by /api/v1/chat/stream and the widget's chat.
 */
export async function streamTurnAnswer(ctx: ParameterizedContext<RequestState>, deps: ChatDependencies, turn: OpenTurn, heartbeatMs: number): Promise<void> {
  ctx.status = 200;
  ctx.respond = false;
  const stream = new EventStream(ctx.res, heartbeatMs);
  const ids = { conversation_id: turn.conversation_id, user_message_id: turn.user_message_id };
  try {
    let done = { ...ids, message_id: null as string | null, paused: turn.paused, answered_from_knowledge: null as boolean | null, model: null as string | null };
    for await (const step of answerTurn(deps, turn, stream.gone)) {
      if (step.kind === 'delta') await stream.send('delta', { text: step.text });
      if (step.kind === 'citation') await stream.send('citation', step.citation);
      if (step.kind === 'tool') await stream.send('tool', step.step);
      if (step.kind === 'answered') done = { ...done, message_id: step.answer.message_id, answered_from_knowledge: step.answer.answered_from_knowledge, model: step.answer.model };
      if (step.kind === 'failed') {
        await stream.send('error', { code: ASSISTANT_UNAVAILABLE, message: `the assistant could not answer (${step.code}); try again`, ...ids });
        return;
      }
    }
    // A client that left gets nothing more; what happened is on the conversation (client_gone).
    if (!stream.gone.aborted) await stream.send('done', done);
  } catch (error) {
    ctx.state.logger.error({ err: error, conversation_id: turn.conversation_id }, 'chat stream failed');
    await stream.send('error', { code: 'internal_error', message: 'Internal server error', ...ids });
  } finally {
    stream.end();
  }
}
