// The super admin's WhatsApp routes (spec 4.16): each tenant's channel configuration
// (`GET, PUT /api/v1/admin/whatsapp/config?tenant_id=`: the configuration carries its ETag, a
// change honours If-Match), every configuration (`GET /api/v1/admin/whatsapp/configs`), and the
// messages the platform sends WhatsApp users (`GET /api/v1/admin/whatsapp/outbox`). Secrets go
// in, never out: answers say `has_app_secret`, `has_access_token`. Shapes: docs/whatsapp.md.

import Router from '@koa/router';
import * as t from 'io-ts';
import type { UseCaseDependencies } from '../../../application/shared/dependencies';
import { OUTBOX_STATUSES, type OutboxFilter, listWhatsAppOutbox } from '../../../application/whatsapp/outbox';
import { type WhatsAppSettings, configureWhatsApp, listWhatsAppConfigs, readWhatsAppConfig } from '../../../application/whatsapp/whatsapp-config';
import { invalid } from '../../../domain/shared/errors';
import { decodeBody } from '../decode';
import { answerVersioned, preconditionsOf } from '../entity-tags';
import { pageQuery } from '../pagination';
import { adminRequest } from './plans';
import { type AdminState, requireAdmin } from './require-admin';

/** The body of PUT /whatsapp/config: every field optional (left out: kept); a first configuration needs phone_number_id, verify_token, app_secret. */
export const WhatsAppConfigBody = t.exact(
  t.partial({
    phone_number_id: t.string,
    display_phone_number: t.string,
    verify_token: t.string,
    app_secret: t.string,
    access_token: t.union([t.string, t.null]),
    enabled: t.boolean,
    graph_api_version: t.string,
    workspace_id: t.union([t.string, t.null]),
  }),
  'WhatsAppConfig',
);

type Query = Record<string, string | string[] | undefined>;

function tenantIdOf(query: Query): string {
  const { tenant_id } = query;
  if (typeof tenant_id !== 'string' || tenant_id.length === 0 || tenant_id.length > 200) throw invalid('invalid_request', 'tenant_id: expected the id of one organization', 'tenant_id');
  return tenant_id;
}

function enabledOf(query: Query): boolean | undefined {
  const { enabled } = query;
  if (enabled === undefined) return undefined;
  if (enabled !== 'true' && enabled !== 'false') throw invalid('invalid_request', 'enabled: expected true or false', 'enabled');
  return enabled === 'true';
}

function outboxFilter(query: Query): OutboxFilter {
  const { tenant_id, status } = query;
  if (tenant_id !== undefined && (typeof tenant_id !== 'string' || tenant_id.length === 0)) throw invalid('invalid_request', 'tenant_id: expected one organization id', 'tenant_id');
  if (status !== undefined && (typeof status !== 'string' || !OUTBOX_STATUSES.some((known) => known === status))) {
    throw invalid('invalid_request', `status: expected one of ${OUTBOX_STATUSES.join(', ')}`, 'status');
  }
  return { ...(tenant_id !== undefined ? { tenant_id } : {}), ...(status !== undefined ? { status: status as OutboxFilter['status'] } : {}) };
}

export function adminWhatsAppRouter(identity: UseCaseDependencies, settings: WhatsAppSettings): Router<AdminState> {
  const router = new Router<AdminState>({ prefix: '/api/v1/admin/whatsapp' });
  const admin = requireAdmin(identity);
  const deps = { ...identity, whatsapp: settings };

  router.get('/config', admin, async (ctx) => {
    answerVersioned(ctx, await readWhatsAppConfig(deps, tenantIdOf(ctx.query)));
  });

  router.put('/config', admin, async (ctx) => {
    const tenantId = tenantIdOf(ctx.query);
    const preconditions = preconditionsOf(ctx);
    const input = decodeBody(WhatsAppConfigBody, ctx.request.body);
    answerVersioned(ctx, await configureWhatsApp(deps, tenantId, input, adminRequest(ctx), preconditions));
  });

  router.get('/configs', admin, async (ctx) => {
    ctx.body = await listWhatsAppConfigs(deps, { enabled: enabledOf(ctx.query) }, pageQuery(ctx.query));
  });

  router.get('/outbox', admin, async (ctx) => {
    ctx.body = await listWhatsAppOutbox(identity, outboxFilter(ctx.query), pageQuery(ctx.query));
  });

  return router;
}
