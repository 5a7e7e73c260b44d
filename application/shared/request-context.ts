import type { Actor, EventMetadata } from '../ports/event-store';

/** Who asks, on whose behalf and from where: becomes every event's metadata. */
export interface RequestContext {
  tenant_id: string | null;
  actor: Actor;
  /** Whose token the actor uses, when that is someone else (an impersonated member); see EventMetadata. */
  subject?: Actor;
  request_id: string | null;
  correlation_id: string;
  causation_id: string | null;
  /** The client's address (what the per-address rate limits count, what a session shows). */
  ip: string | null;
  /**
   * The client's address as event metadata records it, where the deployment records less than
   * `ip` (EVENT_CLIENT_IP: truncated, or none); `ip` when absent.
   */
  recorded_ip?: string | null;
  /**
   * The client's User-Agent (cleaned, at most USER_AGENT_MAX_LENGTH characters), for a session
   * the request opens: its owner tells their sessions apart by it. Never in event metadata.
   */
  user_agent?: string | null;
}

export const USER_AGENT_MAX_LENGTH = 256;

/** A User-Agent as a session keeps it: control characters out, spaces folded, cut; null when empty. */
export function cleanUserAgent(header: string | undefined): string | null {
  if (!header) return null;
  const cleaned = header.replace(/[\u0000-\u001f\u007f]+/g, ' ').replace(/\s+/g, ' ').trim();
  return cleaned === '' ? null : cleaned.slice(0, USER_AGENT_MAX_LENGTH);
}

export function eventMetadata(context: RequestContext, occurredAt: Date, tenantId: string | null = context.tenant_id): EventMetadata {
  return {
    tenant_id: tenantId,
    actor: context.actor,
    request_id: context.request_id,
    correlation_id: context.correlation_id,
    causation_id: context.causation_id,
    occurred_at: occurredAt.toISOString(),
    ip: context.recorded_ip === undefined ? context.ip : context.recorded_ip,
    ...(context.subject ? { subject: context.subject } : {}),
  };
}

/** Context for work the platform does by itself (sagas, operator commands). */
export function systemContext(correlationId: string, actorId = 'platform', causationId: string | null = null): RequestContext {
  return {
    tenant_id: null,
    actor: { kind: 'system', id: actorId },
    request_id: null,
    correlation_id: correlationId,
    causation_id: causationId,
    ip: null,
  };
}
