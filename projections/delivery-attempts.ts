// How a read model shows an outbound delivery with retries (a handoff to its webhook, a WhatsApp
// reply, a lead to its CRM) after a failed attempt and once given up: the same fields for every
// kind, so the lists and due passes of each read them alike.

/** A failed attempt as its event records it. */
export interface FailedAttempt {
  attempt: number;
  status_code: number | null;
  error: string;
  next_attempt_at: string;
}

/** The give-up as its event records it. */
export interface AbandonedDelivery {
  attempts: number;
  status_code: number | null;
  error: string;
}

/** The patch after a failed attempt: retrying at `next_attempt_at`; `attempts` never goes back. */
export const retryingPatch = (attemptsSoFar: number, failed: FailedAttempt) => ({
  status: 'retrying' as const,
  attempts: Math.max(attemptsSoFar, failed.attempt),
  last_status_code: failed.status_code,
  last_error: failed.error,
  next_attempt_at: failed.next_attempt_at,
});

/** The patch once the delivery is given up: abandoned, nothing more due. */
export const abandonedPatch = (abandoned: AbandonedDelivery) => ({
  status: 'abandoned' as const,
  attempts: abandoned.attempts,
  last_status_code: abandoned.status_code,
  last_error: abandoned.error,
  next_attempt_at: null,
});
