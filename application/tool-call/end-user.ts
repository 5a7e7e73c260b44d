// The end user's X-End-User-Token and X-End-User-Session a tool call forwards (spec 5.1 rule 4):
// those of the chat turn that asked for it, sealed on ToolCallRequested. A call may run long
// after its turn (after an approval, a connector's challenge, a slow connector), so before it
// sends them it asks its conversation whether the end user cleared their identity since the
// message of that turn (EndUserIdentityCleared: the widget's clearIdentity(), docs/widget.md):
// then it forwards neither. Calls that are no chat step (a test, a flow) forward what they hold.

import { type ConversationEvent, conversationStream } from '../../domain/conversation/conversation';
import type { ToolCallOrigin } from '../../domain/tool-call/tool-call';
import type { CommandDependencies } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';

export interface EndUserValues {
  token: string | null;
  session: string | null;
}

const NONE: EndUserValues = { token: null, session: null };

/** Whether the conversation recorded EndUserIdentityCleared after the user message `messageId` (or anywhere, when that message is not found). */
export async function endUserClearedSince(deps: Pick<CommandDependencies, 'eventStore'>, conversationId: string, messageId: string): Promise<boolean> {
  const events = (await deps.eventStore.readStream(conversationStream(conversationId))) as unknown as ConversationEvent[];
  const posted = events.findIndex((event) => event.type === 'UserMessagePosted' && event.data.message_id === messageId);
  return events.some((event, index) => event.type === 'EndUserIdentityCleared' && index > posted);
}

/** Whether the conversation recorded EndUserIdentityCleared after the store position `position`. */
export async function endUserClearedAfter(deps: Pick<CommandDependencies, 'eventStore'>, conversationId: string, position: number): Promise<boolean> {
  const events = await deps.eventStore.readStream(conversationStream(conversationId));
  return events.some((event) => event.type === 'EndUserIdentityCleared' && event.position > position);
}

/** The values a call forwards, in clear (see the top of this file). */
export async function forwardedEndUser(
  deps: Pick<CommandDependencies, 'eventStore'> & { secrets: Pick<Secrets, 'open'> },
  requested: { origin: ToolCallOrigin; end_user_token_sealed: string | null; end_user_session_sealed: string | null },
): Promise<EndUserValues> {
  if (requested.end_user_token_sealed === null && requested.end_user_session_sealed === null) return NONE;
  const { origin } = requested;
  if (origin.kind === 'chat' && (await endUserClearedSince(deps, origin.conversation_id, origin.reply_to))) return NONE;
  const open = (sealed: string | null): string | null => (sealed === null ? null : deps.secrets.open(sealed));
  return { token: open(requested.end_user_token_sealed), session: open(requested.end_user_session_sealed) };
}
