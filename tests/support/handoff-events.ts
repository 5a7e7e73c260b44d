// Handoff events of one delivery (`h1` of conversation `c1`), for the decider and process
// manager specs.

import type { HandoffEvent, HandoffRequestedData } from '../../domain/handoff/handoff';
import { FIXED_NOW } from './decider-spec';

export const plus = (ms: number): Date => new Date(FIXED_NOW.getTime() + ms);
export const request: HandoffRequestedData = {
  handoff_id: 'h1',
  tenant_id: 't1',
  conversation_id: 'c1',
  conversation_revision: 4,
  handed_off_by: { kind: 'user', id: 'u1' },
  handed_off_at: plus(-60_000).toISOString(),
  url: 'https://desk.example.com/hook',
  requested_at: plus(-30_000).toISOString(),
};
export const requested: HandoffEvent = { type: 'HandoffRequested', data: request };
export const started = (attempt: number, at = FIXED_NOW): HandoffEvent => ({ type: 'HandoffAttemptStarted', data: { handoff_id: 'h1', attempt, url: request.url, started_at: at.toISOString() } });
export const failed = (attempt: number, next: Date): HandoffEvent => ({
  type: 'HandoffDeliveryFailed',
  data: { handoff_id: 'h1', attempt, status_code: 500, error: 'the webhook answered HTTP 500', failed_at: FIXED_NOW.toISOString(), next_attempt_at: next.toISOString() },
});
export const delivered: HandoffEvent = { type: 'HandoffDelivered', data: { handoff_id: 'h1', attempt: 1, status_code: 204, delivered_at: FIXED_NOW.toISOString() } };
