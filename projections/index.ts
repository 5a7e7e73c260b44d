// Every projection the platform runs.
import { auditLogProjection } from './audit-log';
import { businessToolsProjection } from './business-tools';
import { conversationsProjection } from './conversations';
import { conversationAnalyticsProjection } from './conversation-analytics';
import { crmConfigsProjection } from './crm-configs';
import { widgetConfigsProjection } from './widget-configs';
import { leadsProjection } from './leads';
import { leadOriginsProjection } from './lead-origins';
import { whatsappConfigsProjection } from './whatsapp-configs';
import { whatsappRepliesProjection } from './whatsapp-replies';
import { whatsappMessagesProjection } from './whatsapp-messages';
import { integrationsProjection } from './integrations';
import { toolCallsProjection } from './tool-calls';
import { orchestrationEventsProjection } from './orchestration-events';
import { orchestrationRangeReplaysProjection } from './orchestration-range-replays';
import { feedbacksProjection } from './feedbacks';
import { handoffConfigsProjection } from './handoff-configs';
import { handoffDeliveriesProjection } from './handoff-deliveries';
import { dailyUsageProjection } from './daily-usage';
import { documentsProjection } from './documents';
import { emailsProjection } from './emails';
import { invitationsProjection } from './invitations';
import { membershipsProjection } from './memberships';
import { notificationPreferencesProjection } from './notification-preferences';
import { orchestrationAlertDigestsProjection } from './orchestration-alert-digests';
import { knowledgeGapDigestsProjection } from './knowledge-gap-digests';
import { paymentsProjection } from './payments';
import { plansProjection } from './plans';
import { platformSettingsProjection } from './platform-settings';
import type { Projection } from './projection';
import { registrationsProjection } from './registrations';
import { sdkConnectionsProjection } from './sdk-connections';
import { sessionsProjection } from './sessions';
import { subscriptionsProjection } from './subscriptions';
import { teamsProjection } from './teams';
import { tenantQuotasProjection } from './tenant-quotas';
import { tenantRevenueProjection } from './tenant-revenue';
import { tenantsProjection } from './tenants';
import { usersProjection } from './users';
import { workspacesProjection } from './workspaces';

export const allProjections: readonly Projection[] = [
  tenantsProjection,
  auditLogProjection,
  usersProjection,
  membershipsProjection,
  notificationPreferencesProjection,
  sessionsProjection,
  workspacesProjection,
  emailsProjection,
  teamsProjection,
  invitationsProjection,
  registrationsProjection,
  plansProjection,
  paymentsProjection,
  tenantQuotasProjection,
  subscriptionsProjection,
  platformSettingsProjection,
  dailyUsageProjection,
  tenantRevenueProjection,
  conversationsProjection,
  handoffConfigsProjection,
  handoffDeliveriesProjection,
  crmConfigsProjection,
  feedbacksProjection,
  conversationAnalyticsProjection,
  documentsProjection,
  integrationsProjection,
  businessToolsProjection,
  toolCallsProjection,
  sdkConnectionsProjection,
  orchestrationEventsProjection,
  orchestrationRangeReplaysProjection,
  orchestrationAlertDigestsProjection,
  knowledgeGapDigestsProjection,
  widgetConfigsProjection,
  leadsProjection,
  leadOriginsProjection,
  whatsappConfigsProjection,
  whatsappRepliesProjection,
  whatsappMessagesProjection,
];
