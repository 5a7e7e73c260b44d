import type { Context } from 'koa';
import { type RequestContext, cleanUserAgent } from '../../application/shared/request-context';
import { recordedIpOf } from './client-ip';
import type { RequestState } from './middleware/request-context';

const CORRELATION_ID = /^[A-Za-z0-9._:-]{8,128}$/;

/** The request as event metadata sees it; the actor is anonymous until authenticated. */
export function requestContextOf(ctx: Context & { state: RequestState }): RequestContext {
  const correlation = ctx.get('x-correlation-id');
  return {
    tenant_id: null,
    actor: { kind: 'end_user', id: 'anonymous' },
    request_id: ctx.state.requestId,
    correlation_id: CORRELATION_ID.test(correlation) ? correlation : ctx.state.requestId,
    causation_id: null,
    ip: ctx.ip || null,
    ...(ctx.state.eventClientIp === undefined ? {} : { recorded_ip: recordedIpOf(ctx.ip || null, ctx.state.eventClientIp) }),
    user_agent: cleanUserAgent(ctx.get('user-agent')),
  };
}

export function bearerToken(ctx: Context): string | null {
  const header = ctx.get('authorization');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}
