// OpenAPI description of the super-admin routes (admin/index.ts).

import { EMAIL_STATUSES } from '../../../application/admin/outbox';
import { MAX_SEARCH_LENGTH, TENANT_STATUSES } from '../../../application/admin/tenants';
import { MAX_IMPERSONATION_TTL_SECONDS } from '../../../application/admin/impersonation';
import { Branding, TenantSettings } from '../../../domain/tenant/events';
import { PAGE_PARAMETERS, type ApiArea, boolean, dateTime, enumOf, integer, nullable, object, page, ref, schemaOfCodec, string } from '../openapi/describe';
import { LoginBody } from './index';
import { SettingsBody } from './settings';
import { CreateTenantBody, ImpersonateBody, SuspendBody, UpdateTenantBody } from './tenants';

const TENANT_FIELDS = {
  id: string(),
  name: string(),
  slug: string('reserved for good, even once the organization is deleted'),
  status: enumOf(TENANT_STATUSES, 'active; suspended (its members, widget and webhooks get 403 `tenant_suspended` until unsuspended); deleted (soft: its data stays, its members get 403 `tenant_deleted`)'),
  suspended_reason: nullable(string()),
  created_at: dateTime(),
  updated_at: dateTime(),
  deleted_at: nullable(dateTime()),
};

const EMAIL_FIELDS = {
  id: string(),
  tenant_id: nullable(string()),
  to: string(),
  subject: string(),
  kind: string('what the email is for (verification, password reset, invitation, ...)'),
  status: enumOf(EMAIL_STATUSES, 'queued, being sent, waiting for a scheduled retry, sent, kept in the outbox (no mail transport is configured: never sent), or given up after the last attempt'),
  queued_at: dateTime(),
  sent_at: nullable(dateTime()),
  provider: nullable(string()),
  last_error: nullable(string()),
  attempts: integer('attempts started'),
  last_attempt_at: nullable(dateTime('when the latest attempt started')),
  next_attempt_at: nullable(dateTime('when the next attempt is due (status retrying)')),
  abandoned_at: nullable(dateTime()),
};

export const adminApi: ApiArea = {
  tag: 'super admin',
  description: "The platform operator's API (spec 4.16), with its own token: tenant tokens are 401 here, and admin tokens on tenant routes.",
  schemas: {
    AdminLogin: object({ token: string('an admin token: send it as `Authorization: Bearer`'), admin: object({ id: string(), email: string() }) }),
    Email: object(EMAIL_FIELDS, 'an email of the outbox, without its body'),
    EmailWithText: object({ ...EMAIL_FIELDS, text: string('the body') }),
    AdminTenant: object(TENANT_FIELDS, 'an organization in the super admin’s list'),
    AdminTenantDetail: object({ ...TENANT_FIELDS, branding: schemaOfCodec(Branding), settings: schemaOfCodec(TenantSettings) }, 'one organization, never its widget token'),
    AdminTenantCreated: object({ tenant: ref('AdminTenantDetail'), invitation: ref('Invitation') }, 'the new organization and the invitation emailed to its owner (never the invitation token)'),
    Impersonation: object({
      token: string('a user token of the organization, as the member: send it as `Authorization: Bearer`'),
      session_id: string('the session (jti): its events name the admin as actor and the member as subject'),
      expires_at: dateTime(`IMPERSONATION_TTL_SECONDS after now (at most ${MAX_IMPERSONATION_TTL_SECONDS / 60} minutes)`),
      tenant_id: string(),
      user: object({ id: string(), email: string(), name: string() }),
      role: enumOf(['owner', 'admin', 'member']),
      impersonated_by: object({ kind: enumOf(['admin']), id: string() }),
    }),
    PlatformSettings: object({
      signup_open: boolean('whether the `register` mutation signs people up; closed, it answers 403 `signup_closed` (invitations and tenants the super admin creates still work)'),
      updated_at: nullable(dateTime('the last change; null while every setting has its default')),
      updated_by: nullable(string('the admin who made the last change')),
    }),
  },
  routes: {
    '/api/v1/admin/auth/login': {
      post: {
        summary: 'Log in as the super admin',
        access: 'public',
        body: { json: schemaOfCodec(LoginBody) },
        success: { status: 200, description: 'an admin token', json: ref('AdminLogin') },
        errors: [401, 429],
      },
    },
    '/api/v1/admin/emails': {
      get: {
        summary: 'List the outbox',
        access: 'admin_token',
        query: [
          { name: 'status', description: 'only emails of this status', schema: enumOf(EMAIL_STATUSES) },
          { name: 'to', description: 'only emails to this address (case-insensitive)', schema: { type: 'string' } },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'a page of emails, newest first, never their bodies', json: page(ref('Email')) },
      },
    },
    '/api/v1/admin/emails/{id}': {
      get: { summary: 'One email with its body', access: 'admin_token', success: { status: 200, description: 'the email', json: ref('EmailWithText') }, errors: [404] },
    },
    '/api/v1/admin/tenants': {
      get: {
        summary: 'List organizations',
        access: 'admin_token',
        query: [
          { name: 'q', description: 'only organizations whose slug or name starts with this text, ignoring case', schema: { type: 'string', maxLength: MAX_SEARCH_LENGTH } },
          { name: 'status', description: 'only organizations of this status (default: all)', schema: enumOf(TENANT_STATUSES) },
          ...PAGE_PARAMETERS,
        ],
        success: { status: 200, description: 'a page of organizations, newest first', json: page(ref('AdminTenant')) },
      },
      post: {
        summary: 'Create an organization and invite its owner',
        description:
          'Reserves the slug (409 `slug_taken`), creates the organization with its default workspace and widget token, and emails the owner an invitation with the role `owner` (through the outbox). Works while sign-up is closed.',
        access: 'admin_token',
        idempotent: true,
        body: { json: schemaOfCodec(CreateTenantBody) },
        success: {
          status: 201,
          description: 'the organization and the owner’s invitation',
          json: ref('AdminTenantCreated'),
          headers: { Location: { description: 'the new organization', schema: { type: 'string' } } },
        },
      },
    },
    '/api/v1/admin/tenants/{id}': {
      get: { versioned: 'read', summary: 'One organization', access: 'admin_token', success: { status: 200, description: 'the organization', json: ref('AdminTenantDetail') }, errors: [404] },
      put: {
        versioned: 'conditional',
        summary: 'Change an organization’s name, branding or settings',
        description: 'The fields given change together or not at all; a deleted organization is 409 `tenant_deleted`.',
        access: 'admin_token',
        body: { json: schemaOfCodec(UpdateTenantBody) },
        success: { status: 200, description: 'the organization after the change', json: ref('AdminTenantDetail') },
        errors: [404, 409],
      },
      delete: {
        versioned: 'conditional',
        summary: 'Delete an organization (soft)',
        description: 'Records `TenantDeleted`: the data stays for audit, the slug stays reserved, and every member’s token, login and widget token is refused with 403 `tenant_deleted`. Deleting it again is 409 `tenant_deleted`.',
        access: 'admin_token',
        success: { status: 204, description: 'deleted' },
        errors: [404, 409],
      },
    },
    '/api/v1/admin/tenants/{id}/suspend': {
      post: {
        versioned: 'read',
        summary: 'Suspend an organization',
        description: 'Its members’ tokens, logins, widget token and webhooks get 403 `tenant_suspended` until it is unsuspended. 409 `tenant_suspended` when it already is, `tenant_deleted` once deleted.',
        access: 'admin_token',
        body: { json: schemaOfCodec(SuspendBody) },
        success: { status: 200, description: 'the organization, suspended', json: ref('AdminTenantDetail') },
        errors: [404, 409],
      },
    },
    '/api/v1/admin/tenants/{id}/unsuspend': {
      post: {
        versioned: 'read',
        summary: 'Lift a suspension',
        description: '409 `tenant_not_suspended` when it is not suspended, `tenant_deleted` once deleted.',
        access: 'admin_token',
        success: { status: 200, description: 'the organization, active again', json: ref('AdminTenantDetail') },
        errors: [404, 409],
      },
    },
    '/api/v1/admin/tenants/{id}/impersonate': {
      post: {
        summary: 'Act as a member of an organization',
        description:
          'A short-lived user token (IMPERSONATION_TTL_SECONDS, at most an hour) for the member named, or by default the organization’s owner. Every event written with it names the admin as actor and the member as subject; the organization’s audit log shows `ImpersonationStarted`. The token cannot switch organizations. 409 `tenant_suspended` / `tenant_deleted` for an organization that is not active, `no_owner` when it has no active owner yet, `member_disabled` for a disabled member.',
        access: 'admin_token',
        body: { json: schemaOfCodec(ImpersonateBody) },
        success: { status: 200, description: 'the token and whom it acts as', json: ref('Impersonation') },
        errors: [404, 409],
      },
    },
    '/api/v1/admin/settings': {
      get: { versioned: 'read', summary: 'The platform settings', access: 'admin_token', success: { status: 200, description: 'every setting, defaults included', json: ref('PlatformSettings') } },
      put: {
        versioned: 'conditional',
        summary: 'Change platform settings',
        description: 'Only the settings given change; the same values again record nothing.',
        access: 'admin_token',
        body: { json: schemaOfCodec(SettingsBody) },
        success: { status: 200, description: 'the settings after the change', json: ref('PlatformSettings') },
      },
    },
  },
};
