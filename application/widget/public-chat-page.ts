// The public chat page of a tenant (GET /chat/{slug}, spec 4.15 and issue #15): what the page
// shows of the tenant (its branding) and the publishable widget token it embeds. A tenant that
// is unknown, suspended or deleted, whose widget is turned off or has no token yet has no
// page: one `chat_not_found`, which does not tell which of them it was.

import { notFound } from '../../domain/shared/errors';
import { slugProblem } from '../../domain/tenant/slug';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import type { Secrets } from '../ports/identity';
import type { ReadModelDependencies } from '../shared/read-models';
import { isActiveTenant } from '../tenant/active-tenant';
import { publicTenantBranding } from '../tenant/tenant-queries';
import { widgetSettingsOf } from './widget-access';

export type PublicChatPageDependencies = ReadModelDependencies & { secrets: Pick<Secrets, 'open'> };

export interface PublicChatPage {
  slug: string;
  display_name: string;
  /** The branding colour, else the widget's primary colour (#rrggbb). */
  primary_color: string;
  /** An https URL, or null. */
  logo_url: string | null;
  /** The tenant's publishable widget token (it is in every page that embeds the widget). */
  widget_token: string;
}

const chatNotFound = () => notFound('chat_not_found', 'there is no chat at this address');

/** The page of the active tenant with this slug; 404 `chat_not_found` otherwise. */
export async function publicChatPage(deps: PublicChatPageDependencies, slug: string): Promise<PublicChatPage> {
  const wanted = slug.trim().toLowerCase();
  if (slugProblem(wanted) !== null) throw chatNotFound();
  const { items } = await deps.readStore.collection<TenantDocument>(TENANTS).find({ where: { slug: wanted }, limit: 1 });
  const tenant = items[0] ?? null;
  if (!isActiveTenant(tenant) || tenant.settings?.widget_enabled === false || !tenant.widget_token_sealed) throw chatNotFound();
  const branding = await publicTenantBranding(deps, wanted).catch(() => {
    throw chatNotFound();
  });
  const { settings } = await widgetSettingsOf(deps, tenant.id);
  return {
    slug: tenant.slug,
    display_name: branding.display_name,
    primary_color: branding.primary_color ?? settings.primary_color,
    logo_url: branding.logo_url,
    widget_token: deps.secrets.open(tenant.widget_token_sealed),
  };
}
