// Who talks to the widget routes and /ws/chat (spec 4.4, 5.1 rule 3): the widget token names
// the tenant (it authenticates the embed, not a person), the browser's Origin must be one the
// tenant allows, and the visitor is who the widget says it is: a random visitor id the widget
// keeps in the browser (a bearer secret: whoever holds it continues that visitor's
// conversations), or, in verified-identity mode, the host site's own user id signed by the
// host's backend with the tenant's identity secret (HMAC-SHA256), so one visitor cannot pose
// as another.

import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Party } from '../../domain/conversation/conversation';
import { DomainError, forbidden } from '../../domain/shared/errors';
import { type WidgetSettings, originMatches } from '../../domain/widget-config/widget-config';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { WIDGET_CONFIGS, type WidgetConfigDocument, settingsOf } from '../../projections/widget-configs';
import type { Secrets } from '../ports/identity';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { inactiveTenantError, isActiveTenant } from '../tenant/active-tenant';

export type WidgetAccessDependencies = ReadModelDependencies & { secrets: Pick<Secrets, 'digest' | 'open'> };

/** The embed a widget token stands for: its tenant and the widget's settings as they are now. */
export interface WidgetPrincipal {
  tenant_id: string;
  tenant_slug: string;
  tenant: TenantDocument;
  settings: WidgetSettings;
  /** The identity secret in clear, for checking signed visitor ids; null before one is rotated. Never answered. */
  identity_secret: string | null;
}

/** The one refusal of a token that is missing, unknown or rotated away (401): which of them is not told. */
export const widgetTokenInvalid = (): DomainError => new DomainError('unauthorized', 'invalid_widget_token', 'a valid widget token is required (Authorization: Bearer <widget token>, or ?token= on /ws/chat)');

/** The settings a tenant's widget has now: the defaults until it is first configured. */
export async function widgetSettingsOf(deps: ReadModelDependencies, tenantId: string): Promise<{ settings: WidgetSettings; identity_secret_sealed: string | null }> {
  const doc = await deps.readStore.collection<WidgetConfigDocument>(WIDGET_CONFIGS).get(tenantId);
  return { settings: settingsOf(doc), identity_secret_sealed: doc?.identity_secret_sealed ?? null };
}

/**
 * The widget a token opens: 401 `invalid_widget_token` for a missing, unknown or rotated token
 * (a rotation stops the old token at once: only the current token's digest is on the tenant);
 * 403 `tenant_suspended` / `tenant_deleted` for a tenant that is not active; 403
 * `widget_disabled` when the tenant turned its widget off (setting `widget_enabled`).
 */
export async function authenticateWidget(deps: WidgetAccessDependencies, token: string | null | undefined): Promise<WidgetPrincipal> {
  if (!token || token.length > 200) throw widgetTokenInvalid();
  const { items } = await deps.readStore.collection<TenantDocument>(TENANTS).find({ where: { widget_token_hash: deps.secrets.digest(token) }, limit: 1 });
  const tenant = items[0] ?? null;
  if (tenant === null) throw widgetTokenInvalid();
  if (!isActiveTenant(tenant)) throw inactiveTenantError(tenant);
  if (tenant.settings?.widget_enabled === false) throw forbidden('widget_disabled', 'this organization has turned its website widget off');
  const { settings, identity_secret_sealed } = await widgetSettingsOf(deps, tenant.id);
  return { tenant_id: tenant.id, tenant_slug: tenant.slug, tenant, settings, identity_secret: identity_secret_sealed === null ? null : deps.secrets.open(identity_secret_sealed) };
}

/**
 * Whether a browser on `origin` may use the widget: the platform's own origin always (the public
 * chat page), otherwise one of the tenant's `allowed_origins`. A request without an Origin
 * header comes from no browser page (a server, curl), where the check protects nothing: allowed.
 */
export function originAllowed(settings: Pick<WidgetSettings, 'allowed_origins'>, origin: string | null | undefined, platformOrigin: string | null): boolean {
  if (origin === undefined || origin === null || origin === '') return true;
  if (platformOrigin !== null && origin.toLowerCase() === platformOrigin.toLowerCase()) return true;
  return originMatches(settings.allowed_origins, origin);
}

/** 403 `origin_not_allowed` unless `originAllowed`. */
export function requireAllowedOrigin(widget: WidgetPrincipal, origin: string | null | undefined, platformOrigin: string | null): void {
  if (!originAllowed(widget.settings, origin, platformOrigin)) {
    throw forbidden('origin_not_allowed', `this widget may not be embedded on ${String(origin).slice(0, 200)}: an admin adds the site to the widget's allowed_origins`);
  }
}

/** A visitor id the widget made: 22 to 64 URL-safe characters (at least 128 random bits as base64url). */
const VISITOR_ID = /^[A-Za-z0-9_-]{22,64}$/;
/** A host site's user id, as it signs it: printable, at most 200 characters. */
const HOST_USER_ID = /^[\x21-\x7e]{1,200}$/;

/** What the widget says of its visitor. */
export interface VisitorClaim {
  /** The random id the widget keeps in the browser. */
  visitor_id: string;
  /** The host site's user id and its signature, when the host page called identify() with them. */
  user_id?: string | null;
  user_hash?: string | null;
}

/** The visitor a widget request speaks for: how they appear in conversations, and whether the host vouched for them. */
export interface Visitor {
  party: Party;
  verified: boolean;
  /** The host site's user id, when verified. */
  user_id: string | null;
  /** A verified visitor's party id before ids became digests (`verified:<user id>`): the conversations they started then are theirs too. Null for others. */
  legacy_party_id: string | null;
}

/** A verified visitor's party id: a keyed digest of the tenant and the host's user id, which is personal data and never an id. */
export const verifiedPartyId = (secrets: Pick<Secrets, 'digest'>, tenantId: string, userId: string): string => `verified:${secrets.digest(`verified:${tenantId}:${userId}`).slice(0, 32)}`;

/** The signature the host's backend computes for a user id: hex HMAC-SHA256 with the widget's identity secret. */
export const identitySignature = (secret: string, userId: string): string => createHmac('sha256', secret).update(userId, 'utf8').digest('hex');

function signatureMatches(secret: string, userId: string, hash: string): boolean {
  const expected = Buffer.from(identitySignature(secret, userId), 'utf8');
  const given = Buffer.from(hash.toLowerCase(), 'utf8');
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/**
 * The visitor of a request: 400 `invalid_visitor` for a malformed visitor id; with a signed user
 * id, 401 `invalid_identity` when the signature is wrong (or verification is off: nothing can be
 * vouched for then); 401 `identity_required` when the widget requires verified visitors and
 * none is given. A verified visitor is `end_user` `verified:<keyed digest of the tenant and the
 * user id>` (the same person on any device; the user id is personal data, kept sealed on the
 * conversations they start); any other is `end_user` `visitor:<keyed digest of the visitor id>`
 * (the id itself is a bearer secret and is never recorded).
 */
export function visitorOf(deps: { secrets: Pick<Secrets, 'digest'> }, widget: Pick<WidgetPrincipal, 'tenant_id' | 'settings' | 'identity_secret'>, claim: VisitorClaim): Visitor {
  if (typeof claim.visitor_id !== 'string' || !VISITOR_ID.test(claim.visitor_id)) {
    throw new DomainError('invalid', 'invalid_visitor', 'visitor_id: expected 22 to 64 characters of A-Z a-z 0-9 _ - (the widget makes one at random)', 'visitor_id');
  }
  const mode = widget.settings.identity_verification;
  if (claim.user_id !== undefined && claim.user_id !== null && claim.user_id !== '') {
    if (!HOST_USER_ID.test(claim.user_id)) throw new DomainError('invalid', 'invalid_identity', 'user_id: expected 1 to 200 printable characters', 'user_id');
    if (mode === 'off' || widget.identity_secret === null || typeof claim.user_hash !== 'string' || !signatureMatches(widget.identity_secret, claim.user_id, claim.user_hash)) {
      throw new DomainError('unauthorized', 'invalid_identity', 'user_hash does not match user_id: sign the user id with the widget identity secret on your server (hex HMAC-SHA256)');
    }
    return {
      party: { kind: 'end_user', id: verifiedPartyId(deps.secrets, widget.tenant_id, claim.user_id) },
      verified: true,
      user_id: claim.user_id,
      legacy_party_id: `verified:${claim.user_id}`,
    };
  }
  if (mode === 'required') throw new DomainError('unauthorized', 'identity_required', 'this widget only talks to signed-in visitors: call identify({user_id, user_hash}) first');
  return { party: { kind: 'end_user', id: `visitor:${deps.secrets.digest(`visitor:${claim.visitor_id}`).slice(0, 32)}` }, verified: false, user_id: null, legacy_party_id: null };
}

/** The context of what a visitor does: the end user as actor, in the widget's tenant. */
export const visitorContext = (widget: Pick<WidgetPrincipal, 'tenant_id'>, visitor: Visitor, context: RequestContext): RequestContext => ({
  ...context,
  tenant_id: widget.tenant_id,
  actor: { kind: 'end_user', id: visitor.party.id },
});
