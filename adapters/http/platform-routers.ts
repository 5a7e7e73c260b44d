// The platform's HTTP layer in one module (the Koa kernel and every router: REST, GraphQL, the
// pages), which the composition root loads when a process first serves HTTP: the operator CLI
// never loads it, nor the OpenAPI documents, the GraphQL schema and the body parsers it builds.

export { apiDescriptionRouter } from './api-description';
export { graphqlRouter } from './graphql';
export { meSessionsRouter } from './me/sessions';
export { meAccountRouter } from './me/account';
export { meNotificationsRouter } from './me/notifications';
export { unsubscribeRouter } from './notifications/unsubscribe';
export { adminRouter } from './admin/index';
export { adminPlansRouter } from './admin/plans';
export { adminAuditLogsRouter } from './admin/audit-logs';
export { adminAnalyticsRouter } from './admin/analytics';
export { adminQuotasRouter } from './admin/quotas';
export { adminSettingsRouter } from './admin/settings';
export { adminTenantsRouter } from './admin/tenants';
export { adminPaymentsRouter } from './admin/payments';
export { billingRouter } from './billing/billing';
export { conversationsRouter } from './conversations/conversations';
export { documentsRouter } from './documents/documents';
export { orgAuditLogsRouter } from './org/audit-logs';
export { orgRouter } from './org/index';
export { teamRouter } from './team/index';
export { publicRouter } from './public';
export { sandboxCheckoutPageRouter } from './billing/sandbox-page';
export { widgetScriptRouter } from './widget/widget-script';
export { publicChatPageRouter } from './widget/chat-page';
export { operationsRouter } from './operations';
export { chatRouter } from './chat/chat';
export { tenantRouter } from './tenant/index';
export { widgetRouter } from './widget/widget';
export { integrationsRouter } from './integrations/integrations';
export { toolCallsRouter } from './tools/tool-calls';
export { integrationImportRouter } from './integrations/import';
export { toolsRouter } from './tools/tools';
export { sdkConnectionsRouter } from './sdk-connections/sdk-connections';
export { orchestrationEventsRouter } from './orchestration/orchestration-events';
export { widgetLeadsRouter } from './widget/leads';
export { widgetFeedbackHandoffRouter } from './widget/feedback-handoff';
export { speechRouter } from './widget/speech';
export { whatsappWebhookRouter } from './whatsapp/webhook';
export { adminWhatsAppRouter } from './admin/whatsapp';
export { WIDGET_BUNDLE_PATH } from '../widget-client/bundle';
export { MOUNTED_PREFIX, connectorManagerHealthRouter, connectorManagerRouter } from '../connector-manager/connector-manager';
export { createHttpApp } from './server';
