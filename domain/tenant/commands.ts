import type { Branding, TenantSettings } from './events';

export type TenantCommand =
  | { type: 'CreateTenant'; data: { tenant_id: string; name: string; slug: string; branding?: Branding; settings?: TenantSettings } }
  | { type: 'RenameTenant'; data: { name: string } }
  | { type: 'ChangeTenantBranding'; data: { changes: Branding } }
  | { type: 'ChangeTenantSettings'; data: { changes: TenantSettings } }
  | { type: 'SuspendTenant'; data: { reason: string } }
  | { type: 'UnsuspendTenant'; data: Record<string, never> }
  | { type: 'RotateWidgetToken'; data: { token_hash: string; token_sealed: string } }
  /** The super admin's edit: any of name, branding and settings, recorded together (one revision to compare If-Match with). */
  | { type: 'UpdateTenant'; data: { name?: string; branding?: Branding; settings?: TenantSettings } }
  /** A soft delete: the data stays for audit and the slug stays reserved. */
  | { type: 'DeleteTenant'; data: Record<string, never> };
