// The registry of every event the platform declares, derived from the aggregates' groups.
// Building it checks that no event type and no stream category is declared twice, so a
// duplicate stops the process at start. The categories here are the list of stream
// categories: a new aggregate adds its group, and with it its category.

import { accessDenialEvents } from './access-denial/access-denial';
import { adminEvents } from './admin/admin';
import { auditCheckpointEvents } from './audit-checkpoint/audit-checkpoint';
import { checkoutEvents } from './checkout/checkout';
import { emailEvents } from './email/email';
import { idempotencyKeyEvents } from './idempotency-key/idempotency-key';
import { invitationEvents } from './invitation/invitation';
import { membershipEvents } from './membership/membership';
import { notificationPreferencesEvents } from './notification-preferences/notification-preferences';
import { orchestrationAlertDigestEvents } from './orchestration-alert-digest/alert-digest';
import { knowledgeGapDigestEvents } from './knowledge-gap-digest/knowledge-gap-digest';
import { paymentEvents } from './payment/payment';
import { documentEvents } from './document/document';
import { conversationEvents } from './conversation/conversation';
import { connectorAuthenticationEvents } from './connector-authentication/connector-authentication';
import { handoffConfigEvents } from './handoff-config/handoff-config';
import { crmConfigEvents } from './crm-config/crm-config';
import { widgetConfigEvents } from './widget-config/widget-config';
import { leadEvents } from './lead/lead';
import { whatsappConfigEvents } from './whatsapp-config/whatsapp-config';
import { whatsappMessageEvents } from './whatsapp-message/whatsapp-message';
import { whatsappReplyEvents } from './whatsapp-reply/whatsapp-reply';
import { integrationEvents } from './integration/integration';
import { toolEvents } from './tool/tool';
import { toolCallEvents } from './tool-call/tool-call';
import { sdkConnectionEvents } from './sdk-connection/sdk-connection';
import { orchestrationEventEvents } from './orchestration-event/orchestration-event';
import { orchestrationPayloadsEvents } from './orchestration-payloads/orchestration-payloads';
import { rangeReplayEvents } from './orchestration-range-replay/orchestration-range-replay';
import { handoffEvents } from './handoff/handoff';
import { planEvents } from './plan/plan';
import { providerEventEvents } from './provider-event/provider-event';
import { quotaOverrideEvents } from './quota-override/quota-override';
import { platformSettingsEvents } from './platform-settings/platform-settings';
import { registrationEvents } from './registration/registration';
import { reservationEvents } from './reservation/reservation';
import { sessionEvents } from './session/session';
import { subscriptionEvents } from './subscription/subscription';
import { type RegistryEvent, eventRegistry } from './shared/events';
import { teamEvents } from './team/team';
import { tenantEvents } from './tenant/events';
import { userEvents } from './user/events';
import { workspaceEvents } from './workspace/workspace';

export const domainEvents = eventRegistry([
  tenantEvents,
  userEvents,
  membershipEvents,
  sessionEvents,
  workspaceEvents,
  teamEvents,
  invitationEvents,
  emailEvents,
  reservationEvents,
  adminEvents,
  accessDenialEvents,
  auditCheckpointEvents,
  idempotencyKeyEvents,
  registrationEvents,
  paymentEvents,
  planEvents,
  quotaOverrideEvents,
  platformSettingsEvents,
  checkoutEvents,
  subscriptionEvents,
  providerEventEvents,
  documentEvents,
  conversationEvents,
  handoffConfigEvents,
  crmConfigEvents,
  handoffEvents,
  integrationEvents,
  toolEvents,
  toolCallEvents,
  connectorAuthenticationEvents,
  sdkConnectionEvents,
  orchestrationEventEvents,
  orchestrationPayloadsEvents,
  rangeReplayEvents,
  widgetConfigEvents,
  leadEvents,
  whatsappConfigEvents,
  whatsappMessageEvents,
  whatsappReplyEvents,
  notificationPreferencesEvents,
  orchestrationAlertDigestEvents,
  knowledgeGapDigestEvents,
]);

/** Every event of the platform, in its current shape: a `{type, data}` union. */
export type DomainEvent = RegistryEvent<typeof domainEvents>;
export type DomainEventType = DomainEvent['type'];
/** The current data shape of one event type. */
export type DomainEventData<Type extends DomainEventType> = Extract<DomainEvent, { type: Type }>['data'];
