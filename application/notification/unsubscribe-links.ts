// One-click unsubscribe (RFC 8058): each email a person may do without carries a link that
// turns its preference off for them, without signing in. The link's token names the
// organization, the person and the preference, and carries the platform's keyed digest of the
// three (Secrets.digest, HMAC-SHA256), so nobody can make one for another person and nothing
// is stored per email. A token does not expire: an unsubscribe link must keep working for as
// long as the emails that carry it are read; at worst a leaked one turns one person's email off,
// which they turn on again (`PATCH /api/v1/me/notifications`). Digest keys rotated: older links
// stop working.
//
// The page (GET) only asks: a mail scanner that follows every link must not unsubscribe
// anyone. The POST (the page's button, or a mail client's one-click request) does it.

import { timingSafeEqual } from 'node:crypto';
import type { NotificationKind } from '../../domain/notification-preferences/notification-preferences';
import { DEFAULT_NOTIFICATION_PREFERENCES, notificationPreferencesStream } from '../../domain/notification-preferences/notification-preferences';
import { invalid, notFound } from '../../domain/shared/errors';
import { MEMBERSHIPS, type MembershipDocument, membershipId } from '../../projections/memberships';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Secrets } from '../ports/identity';
import type { RateLimit, RateLimiter } from '../ports/rate-limiter';
import type { ReadModelDependencies } from '../shared/read-models';
import type { RequestContext } from '../shared/request-context';
import { RateLimitedError } from '../user/abuse-controls';
import { notificationPreferencesAggregate, turnedOff } from './notification-preferences';

/** Where the links point, under the platform's public base URL (PUBLIC_URL). */
export const UNSUBSCRIBE_PATH = '/notifications/unsubscribe';

/** What each preference's emails are about, as the page and its answers name them. */
export const NOTIFICATION_KIND_DESCRIPTIONS: Record<NotificationKind, string> = {
  orchestration_alerts: 'alert emails about orchestration events that were dead-lettered or expired',
  handoff_failures: 'emails about handoffs the handoff webhook never took',
  crm_failures: 'emails about leads the CRM never took',
  knowledge_gaps: 'weekly emails of the questions the assistant could not answer from the knowledge base',
};

/** Wrong tokens allowed per client address and minute; a right one is never refused (mail providers send many from one address). */
export const WRONG_UNSUBSCRIBE_TOKENS: RateLimit = { limit: 20, windowSeconds: 60 };

export interface UnsubscribeTarget {
  tenant_id: string;
  user_id: string;
  kind: NotificationKind;
}

const digestOf = (secrets: Pick<Secrets, 'digest'>, payload: string): string => secrets.digest(`notification-unsubscribe\u0000${payload}`);

/** `<payload>.<digest>`: the payload is base64url JSON `[tenant_id, user_id, kind]`. */
export function unsubscribeToken(secrets: Pick<Secrets, 'digest'>, target: UnsubscribeTarget): string {
  const payload = Buffer.from(JSON.stringify([target.tenant_id, target.user_id, target.kind])).toString('base64url');
  return `${payload}.${digestOf(secrets, payload)}`;
}

/** The link to put in an email, on the platform's public base URL; null without one (the email then says how to do it through the API). */
export function unsubscribeUrl(secrets: Pick<Secrets, 'digest'>, publicUrl: string | null, target: UnsubscribeTarget): string | null {
  if (publicUrl === null) return null;
  return `${publicUrl.replace(/\/+$/, '')}${UNSUBSCRIBE_PATH}?token=${unsubscribeToken(secrets, target)}`;
}

const isKind = (value: unknown): value is NotificationKind => typeof value === 'string' && Object.prototype.hasOwnProperty.call(DEFAULT_NOTIFICATION_PREFERENCES, value);

/** The target of a well-formed token with a right digest; null for any other string. */
export function targetOfToken(secrets: Pick<Secrets, 'digest'>, token: string): UnsubscribeTarget | null {
  const match = /^([A-Za-z0-9_-]{1,1000})\.([0-9a-f]{64})$/.exec(token);
  if (!match) return null;
  const [, payload, digest] = match;
  const expected = Buffer.from(digestOf(secrets, payload), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(digest, 'hex'))) return null;
  try {
    const decoded: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (!Array.isArray(decoded) || decoded.length !== 3) return null;
    const [tenantId, userId, kind] = decoded as unknown[];
    return typeof tenantId === 'string' && typeof userId === 'string' && isKind(kind) ? { tenant_id: tenantId, user_id: userId, kind } : null;
  } catch {
    return null;
  }
}

export interface UnsubscribeDependencies extends ReadModelDependencies {
  secrets: Pick<Secrets, 'digest'>;
  limiter: RateLimiter;
}

/** What following a link through (POST) needs besides: the command and read-your-writes. */
export interface UnsubscribeLinkDependencies extends UnsubscribeDependencies, CommandDependencies {
  readYourWrites(position: number | null): Promise<boolean>;
}

/** What a link would turn off, and whether it is off already. */
export interface UnsubscribeView {
  organization: string;
  preference: NotificationKind;
  /** What the preference's emails are about. */
  emails: string;
  /** Whether the person has turned it off already. */
  unsubscribed: boolean;
}

/**
 * The target of a link and what the page shows of it. A token that is not one the platform
 * made is 400 `invalid_unsubscribe_link` (spending the caller's address's budget of wrong
 * ones: 429 past it); a person no longer in the organization, or an organization deleted, 404.
 */
async function resolve(deps: UnsubscribeDependencies, token: string, ip: string | null): Promise<{ target: UnsubscribeTarget; view: UnsubscribeView }> {
  const target = targetOfToken(deps.secrets, token);
  if (target === null) {
    const decision = await deps.limiter.consume(`unsubscribe-token:ip:${ip ?? 'unknown'}`, WRONG_UNSUBSCRIBE_TOKENS);
    if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds, 'too many wrong unsubscribe links');
    throw invalid('invalid_unsubscribe_link', 'token: this unsubscribe link is not valid (copy the whole link from the email)', 'token');
  }
  const [tenant, membership] = await Promise.all([
    deps.readStore.collection<TenantDocument>(TENANTS).get(target.tenant_id),
    deps.readStore.collection<MembershipDocument>(MEMBERSHIPS).get(membershipId(target.tenant_id, target.user_id)),
  ]);
  if (tenant === null || tenant.status === 'deleted' || membership === null) {
    throw notFound('not_found', 'you are no longer a member of this organization: it sends you none of these emails');
  }
  const off = await turnedOff(deps, target.tenant_id, [target.user_id], target.kind);
  return {
    target,
    view: { organization: tenant.name, preference: target.kind, emails: NOTIFICATION_KIND_DESCRIPTIONS[target.kind], unsubscribed: off.has(target.user_id) },
  };
}

export async function readUnsubscribeLink(deps: UnsubscribeDependencies, token: string, ip: string | null): Promise<UnsubscribeView> {
  return (await resolve(deps, token, ip)).view;
}

/**
 * Turns the link's preference off for its person, acting as them (the audit log names them).
 * Already off: nothing is recorded, and the answer is the same.
 */
export async function unsubscribeByLink(
  deps: UnsubscribeLinkDependencies,
  token: string,
  context: RequestContext,
): Promise<UnsubscribeView> {
  const { target, view } = await resolve(deps, token, context.ip);
  // Decided on the stream, not on the read model the view came from: off already records nothing.
  const result = await handleCommand(
    deps,
    notificationPreferencesAggregate,
    notificationPreferencesStream(target.tenant_id, target.user_id),
    { type: 'SetNotificationPreferences', data: { tenant_id: target.tenant_id, user_id: target.user_id, preferences: { [target.kind]: false } } },
    { ...context, tenant_id: target.tenant_id, actor: { kind: 'user', id: target.user_id } },
  );
  // The emailing sagas read the read model: once it holds the change, no further email of the kind is queued.
  await deps.readYourWrites(result.position);
  return { ...view, unsubscribed: true };
}
