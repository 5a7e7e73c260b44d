// The quota overrides of one tenant: limits the super admin sets above or below the plan's.
// A quota named here replaces the plan's limit (a number, or null for unlimited); a quota not
// named keeps the plan's. Setting them replaces the whole set. Stream `quotaOverride-<tenant>`.

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import type { Decider } from '../shared/decider';
import { type DomainError, invalid } from '../shared/errors';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import { toStreamName } from '../shared/stream-names';
import { checkText } from '../shared/text';
import { QUOTAS, type Quota } from '../plan/plan';

export const QuotaOverrides = t.partial({
  messages_per_month: t.union([t.number, t.null]),
  documents: t.union([t.number, t.null]),
  users: t.union([t.number, t.null]),
  business_tools: t.union([t.number, t.null]),
});
export type QuotaOverrides = t.TypeOf<typeof QuotaOverrides>;

export const QuotaOverridesSet = declareEvent(
  'QuotaOverridesSet',
  t.type({ tenant_id: t.string, overrides: QuotaOverrides, previous: QuotaOverrides, reason: t.string, set_at: t.string }),
);
export const quotaOverrideEvents = eventGroup('quotaOverride', [QuotaOverridesSet]);
export type QuotaOverrideEvent = GroupEvent<typeof quotaOverrideEvents>;

export type QuotaOverrideCommand = { type: 'SetQuotaOverrides'; data: { tenant_id: string; overrides: QuotaOverrides; reason: string } };
export interface QuotaOverrideState {
  overrides: QuotaOverrides;
}

export const quotaOverrideStream = (tenantId: string): string => toStreamName(quotaOverrideEvents.category, tenantId);

const MAX_LIMIT = 1_000_000_000;

/** Only the known quotas, each a whole number or null; the first problem names its field. */
function checkedOverrides(overrides: QuotaOverrides): Either<DomainError, QuotaOverrides> {
  const checked: Partial<Record<Quota, number | null>> = {};
  for (const quota of QUOTAS) {
    if (!(quota in overrides) || overrides[quota] === undefined) continue;
    const limit = overrides[quota] as number | null;
    if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0 || limit > MAX_LIMIT)) {
      return left(invalid('invalid_quota', `overrides.${quota}: expected a whole number from 0 to ${MAX_LIMIT}, or null for unlimited`, `overrides.${quota}`));
    }
    checked[quota] = limit;
  }
  return right(checked);
}

const sameOverrides = (a: QuotaOverrides, b: QuotaOverrides): boolean => QUOTAS.every((quota) => (quota in a) === (quota in b) && a[quota] === b[quota]);

export const quotaOverrideDecider: Decider<QuotaOverrideCommand, QuotaOverrideEvent, QuotaOverrideState> = {
  initialState: () => ({ overrides: {} }),
  evolve: (_state, event) => ({ overrides: event.data.overrides }),
  decide(command, state, { now }) {
    const overrides = checkedOverrides(command.data.overrides);
    if (overrides._tag === 'Left') return overrides;
    const reason = checkText('reason', command.data.reason, { min: 0, max: 500, code: 'invalid_quota' });
    if (reason._tag === 'Left') return reason;
    if (sameOverrides(overrides.right, state.overrides)) return right([]);
    return right([
      { type: 'QuotaOverridesSet', data: { tenant_id: command.data.tenant_id, overrides: overrides.right, previous: state.overrides, reason: reason.right, set_at: now.toISOString() } },
    ]);
  },
};
