// The assistant hands a conversation to a person itself (docs/assistant.md, "Handing off to a
// person"). In a conversation of a public channel (the widget, WhatsApp), when the
// organization's plan has handoffs and its handoff webhook is on (so someone is told), the model
// is offered one more tool, `hand_off_to_person`. When it calls it (the user asks for a human,
// or the assistant cannot help), the conversation becomes handed_off with the model's reason,
// as the widget's "talk to a person" button makes it (the handoff delivery saga posts it to the
// webhook; the assistant stays quiet until someone sets the conversation back to open), and
// the turn ends with a note saying a person will answer here (a WhatsApp sender gets it as the
// reply). The call is no business tool call: nothing runs, no tool call is recorded; the status
// change is the record, with the turn's user as its actor.

import { MAX_STATUS_REASON_LENGTH } from '../../domain/conversation/conversation';
import { handoffConfigStream } from '../../domain/handoff-config/handoff-config';
import { normalizeText, textProblem } from '../../domain/shared/text';
import { type CommandDependencies, loadAggregate } from '../command-handling/handle-command';
import { entitlementsOf } from '../entitlement/entitlements';
import { handoffConfigAggregate } from '../handoff/handoff-config';
import type { ToolSpec } from '../ports/assistant-engine';
import type { ReadModelDependencies } from '../shared/read-models';

export const HANDOFF_TOOL_NAME = 'hand_off_to_person';

/** What the user is told when the assistant hands the conversation to a person. */
export const HANDOFF_NOTE = 'I have asked a person from our team to take over this conversation. They will answer you here.';

export const HANDOFF_TOOL: ToolSpec = {
  name: HANDOFF_TOOL_NAME,
  description:
    'Hand this conversation to a person from the team. Call it when the user asks to talk to a human, or when you cannot help them and a person could. The user is told that a person will answer in this conversation; you will not answer again until then.',
  parameters: {
    type: 'object',
    properties: { reason: { type: 'string', description: 'Why a person should take over, in a sentence, for the person who will read it.' } },
    required: [],
    additionalProperties: false,
  },
};

/** Whether the assistant may hand this tenant's conversation of a public channel to a person: the plan has handoffs, and the webhook is on. */
export async function handoffOffered(deps: Pick<CommandDependencies, 'eventStore'> & ReadModelDependencies, tenantId: string, publicChannel: boolean): Promise<boolean> {
  if (!publicChannel) return false;
  const { features } = await entitlementsOf(deps, tenantId);
  if (!features.handoff) return false;
  const { state } = await loadAggregate(deps, handoffConfigAggregate, handoffConfigStream(tenantId));
  return state.status === 'configured' && state.enabled;
}

/** The reason the model gave, as a status change keeps one: one line of at most MAX_STATUS_REASON_LENGTH characters; none when it gave none usable. */
export function handoffReasonOf(argumentsJson: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(argumentsJson);
  } catch {
    return undefined;
  }
  const reason = (parsed as { reason?: unknown } | null)?.reason;
  if (typeof reason !== 'string') return undefined;
  // Line breaks and tabs become spaces; a reason the status change would refuse (a control or
  // bidirectional override character) is dropped rather than failing the handoff.
  const text = normalizeText(reason.replace(/[\r\n\t]+/g, ' ')).slice(0, MAX_STATUS_REASON_LENGTH).trim();
  if (text === '' || textProblem('reason', text, { min: 0, max: MAX_STATUS_REASON_LENGTH })) return undefined;
  return text;
}
