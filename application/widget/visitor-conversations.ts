// What a widget's visitor does with their own conversation besides chatting (spec 4.4): rate an
// answer of the assistant (`POST /widget/messages/{id}/feedback`), ask for a person
// (`POST /widget/conversations/{id}/handoff`) and erase the conversation
// (`POST /widget/conversations/{id}/erase`). Each is the conversation's own command, as a member
// gives it (GiveFeedback, ChangeConversationStatus to handed_off, EraseConversation), with the
// visitor as the party and the actor, so everything downstream (the feedback list and
// analytics, the handoff webhook, the erasure of the leads and tool calls) treats it as it
// treats a member's.
//
// A visitor reaches only the widget conversations they started in the widget's tenant; any
// other conversation or message is 404, so a visitor learns nothing of others'. A feature the
// tenant turned off in the widget's settings (feedback, handoff_button, lead_form, voice,
// visitor_erasure) is 403 `widget_feature_disabled` on its route.

import { conversationStream } from '../../domain/conversation/conversation';
import { handoffConfigStream } from '../../domain/handoff-config/handoff-config';
import { DomainError, conflict, notFound } from '../../domain/shared/errors';
import type { WidgetSettings } from '../../domain/widget-config/widget-config';
import { CONVERSATION_MESSAGES, type ConversationMessageDocument } from '../../projections/conversations';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import { type ConversationDependencies, type ConversationErasureUseCaseDependencies, type ErasureView, type FeedbackView, conversationAggregate, eraseConversationOf } from '../conversation/conversations';
import { requireFeature } from '../entitlement/entitlements';
import { handoffConfigAggregate } from '../handoff/handoff-config';
import type { RequestContext } from '../shared/request-context';
import { type Visitor, type WidgetPrincipal, visitorContext } from './widget-access';
import { isVisitorConversation, requireVisitorConversation } from './widget-chat';

/** The features of the widget's settings a tenant may turn off. */
export type WidgetFeature = keyof Pick<WidgetSettings, 'lead_form' | 'handoff_button' | 'feedback' | 'voice' | 'visitor_erasure'>;

/** A feature the tenant turned off in the widget's settings (403); `setting` names it. */
export class WidgetFeatureDisabledError extends DomainError {
  constructor(readonly setting: WidgetFeature) {
    super('forbidden', 'widget_feature_disabled', `this organization has turned the widget's ${setting} off (widget setting \`${setting}\`)`);
  }

  override details(): Record<string, unknown> {
    return { setting: this.setting };
  }
}

/** 403 `widget_feature_disabled` unless the tenant's widget offers `feature`. */
export function requireWidgetFeature(widget: Pick<WidgetPrincipal, 'settings'>, feature: WidgetFeature): void {
  if (!widget.settings[feature]) throw new WidgetFeatureDisabledError(feature);
}

/**
 * The visitor's rating of an answer of the assistant in their own conversation: 404
 * `message_not_found` for any other message, 409 `feedback_given` for a second rating, 400
 * `invalid_feedback` naming `comment`.
 */
export async function giveVisitorFeedback(
  deps: ConversationDependencies,
  widget: WidgetPrincipal,
  visitor: Visitor,
  messageId: string,
  input: { rating: 'up' | 'down'; comment?: string },
  context: RequestContext,
): Promise<FeedbackView> {
  requireWidgetFeature(widget, 'feedback');
  const messageNotFound = notFound('message_not_found', 'no such answer in your conversations');
  const message = await deps.readStore.collection<ConversationMessageDocument>(CONVERSATION_MESSAGES).get(messageId);
  if (!message) throw messageNotFound;
  const conversationId = message.conversation_id;
  const { state } = await loadAggregate(deps, conversationAggregate, conversationStream(conversationId));
  if (state.status === 'absent' || state.status === 'deleted' || !isVisitorConversation(state, widget, visitor)) throw messageNotFound;
  const result = await handleCommand(
    deps,
    conversationAggregate,
    conversationStream(conversationId),
    { type: 'GiveFeedback', data: { message_id: messageId, rating: input.rating, comment: input.comment ?? '', given_by: visitor.party } },
    visitorContext(widget, visitor, context),
  );
  await deps.readYourWrites(result.position);
  const given = result.events.find((event) => event.type === 'FeedbackGiven');
  if (given?.type !== 'FeedbackGiven') throw new Error('GiveFeedback recorded no FeedbackGiven');
  const { message_id, rating, comment, given_by, given_at } = given.data;
  return { conversation_id: conversationId, message_id, rating, comment, given_by, given_at };
}

/** What a visitor's handoff answers. */
export interface VisitorHandoff {
  conversation_id: string;
  status: 'handed_off';
  /** The assistant answers nothing more until a person sets the conversation back to open. */
  assistant_paused: true;
  handed_off_at: string;
}

/**
 * The visitor asks for a person: their conversation becomes handed_off, which the handoff
 * delivery saga posts to the tenant's handoff webhook (application/handoff) as it does a
 * member's. 403 `feature_not_in_plan` without handoff in the plan; 409 `handoff_not_configured`
 * when the tenant has no handoff webhook on (nobody would learn of it); 409
 * `already_handed_off`; 409 `invalid_status_transition` for a resolved conversation; 400
 * naming `reason` (at most 500 characters).
 */
export async function handOffVisitorConversation(
  deps: ConversationDependencies,
  widget: WidgetPrincipal,
  visitor: Visitor,
  conversationId: string,
  input: { reason?: string },
  context: RequestContext,
): Promise<VisitorHandoff> {
  requireWidgetFeature(widget, 'handoff_button');
  const conversation = await requireVisitorConversation(deps, widget, visitor, conversationId);
  await requireFeature(deps, widget.tenant_id, 'handoff');
  const { state: config } = await loadAggregate(deps, handoffConfigAggregate, handoffConfigStream(widget.tenant_id));
  if (config.status !== 'configured' || !config.enabled) {
    throw conflict('handoff_not_configured', 'this organization has no handoff webhook turned on: nobody would be told; an admin sets one with POST /api/v1/tenant/handoff');
  }
  if (conversation.status === 'handed_off') throw conflict('already_handed_off', 'this conversation is already with a person');
  const result = await handleCommand(
    deps,
    conversationAggregate,
    conversationStream(conversationId),
    { type: 'ChangeConversationStatus', data: { status: 'handed_off', ...(input.reason === undefined ? {} : { reason: input.reason }) } },
    visitorContext(widget, visitor, context),
  );
  await deps.readYourWrites(result.position);
  const changed = result.events.find((event) => event.type === 'ConversationStatusChanged');
  if (changed?.type !== 'ConversationStatusChanged') throw new Error('ChangeConversationStatus recorded no ConversationStatusChanged');
  return { conversation_id: conversationId, status: 'handed_off', assistant_paused: true, handed_off_at: changed.data.changed_at };
}

/**
 * The visitor erases one of their own widget conversations, as an owner or admin erases one
 * (eraseConversationOf: its texts unreadable everywhere, its tool calls and the leads left in it
 * erased with it), the visitor as actor: the right to erasure without asking the organization.
 * A conversation the organization deleted is still theirs to erase. Asked again, the same
 * answer. Any other conversation is 404; 403 `widget_feature_disabled` when the organization
 * turned `visitor_erasure` off.
 */
export async function eraseVisitorConversation(
  deps: ConversationErasureUseCaseDependencies,
  widget: WidgetPrincipal,
  visitor: Visitor,
  conversationId: string,
  context: RequestContext,
): Promise<ErasureView> {
  requireWidgetFeature(widget, 'visitor_erasure');
  const { state } = await loadAggregate(deps, conversationAggregate, conversationStream(conversationId));
  // Live or deleted: a deleted conversation keeps whose it was.
  const theirs = state.status !== 'absent' && state.channel !== null && state.started_by !== null && isVisitorConversation({ tenant_id: state.tenant_id, channel: state.channel, started_by: state.started_by }, widget, visitor);
  if (!theirs) throw notFound('conversation_not_found', 'no such conversation');
  return eraseConversationOf(deps, widget.tenant_id, conversationId, visitorContext(widget, visitor, context));
}
