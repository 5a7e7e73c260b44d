// What any page embedding the widget may learn of it (GET /api/v1/widget/settings): how it looks
// and what it offers, with the tenant's branding filling what the widget settings leave empty.
// Never the identity secret, the allowed origins or the workspace: those are for its admins.

import type { WidgetSettings } from '../../domain/widget-config/widget-config';
import { assistantOf } from '../chat/chat';
import type { ReadModelDependencies } from '../shared/read-models';
import { brandingOfTenant } from '../tenant/tenant-queries';
import type { WidgetPrincipal } from './widget-access';

export interface WidgetAppearance {
  tenant: { name: string; slug: string; logo_url: string | null };
  assistant_name: string;
  /** The widget's title, or the tenant's display name. */
  title: string;
  /** The widget's welcome message, or the tenant's branding one; empty when neither. */
  welcome_message: string;
  primary_color: string;
  background_color: string;
  text_color: string;
  position: WidgetSettings['position'];
  launcher_icon: WidgetSettings['launcher_icon'];
  theme: Record<string, string>;
  custom_css: string;
  features: { lead_form: boolean; lead_form_fields: WidgetSettings['lead_form_fields']; handoff_button: boolean; feedback: boolean; voice: boolean; visitor_erasure: boolean };
  identity_verification: WidgetSettings['identity_verification'];
}

/** The widget as a page embedding it shows it. */
export async function widgetAppearance(deps: ReadModelDependencies, widget: Pick<WidgetPrincipal, 'tenant_id' | 'tenant' | 'settings'>): Promise<WidgetAppearance> {
  const { settings } = widget;
  const branding = brandingOfTenant(widget.tenant);
  const assistant = await assistantOf(deps, widget.tenant_id);
  return {
    tenant: { name: branding.display_name, slug: branding.slug, logo_url: branding.logo_url },
    assistant_name: assistant.name,
    title: settings.title || branding.display_name,
    welcome_message: settings.welcome_message || branding.welcome_message || '',
    primary_color: settings.primary_color,
    background_color: settings.background_color,
    text_color: settings.text_color,
    position: settings.position,
    launcher_icon: settings.launcher_icon,
    theme: settings.theme,
    custom_css: settings.custom_css,
    features: { lead_form: settings.lead_form, lead_form_fields: settings.lead_form_fields, handoff_button: settings.handoff_button, feedback: settings.feedback, voice: settings.voice, visitor_erasure: settings.visitor_erasure },
    identity_verification: settings.identity_verification,
  };
}
