// The registration aggregate: one sign-up, from its first write to the account a person can
// use. Stream `registration-<id>`. Sign-up is many writes (email and slug reservations,
// tenant, user, owner membership, default workspace, widget token, verification code); the
// registration is written first, with the ids every step will use and a deadline, so a
// sign-up that stops half-way (a crash, a lost request) is found and finished or undone.
//
// - `pending` until the last step records `RegistrationCompleted`. Its reservations are
//   tentative meanwhile: after `expires_at` the registration process manager
//   (application/registration/registration-process.ts) completes it or releases them.
// - No personal data: the email is named only by its reservation key (a keyed digest).

import * as t from 'io-ts';
import { type Either, left, right } from 'fp-ts/Either';
import { declareEvent, eventGroup, type GroupEvent } from '../shared/events';
import type { Decider } from '../shared/decider';
import { type DomainError, conflict, notFound } from '../shared/errors';
import { toStreamName } from '../shared/stream-names';

const started = t.type({
  registration_id: t.string,
  user_id: t.string,
  tenant_id: t.string,
  workspace_id: t.string,
  /** The keys naming the reservation streams of the email and of the slug (keyed digests). */
  email_reservation: t.string,
  slug_reservation: t.string,
  /** The tenant to create once the user exists (no personal data: the organization's name and slug). */
  organization_name: t.string,
  slug: t.string,
  started_at: t.string,
  expires_at: t.string,
});
export const RegistrationStarted = declareEvent('RegistrationStarted', started);
export const RegistrationCompleted = declareEvent('RegistrationCompleted', t.type({ registration_id: t.string, completed_at: t.string }));
export const RegistrationAbandoned = declareEvent('RegistrationAbandoned', t.type({ registration_id: t.string, reason: t.string, abandoned_at: t.string }));
export const registrationEvents = eventGroup('registration', [RegistrationStarted, RegistrationCompleted, RegistrationAbandoned]);
export type RegistrationEvent = GroupEvent<typeof registrationEvents>;

export type RegistrationPlan = Omit<t.TypeOf<typeof started>, 'started_at' | 'expires_at'>;

export type RegistrationCommand =
  | { type: 'StartRegistration'; data: RegistrationPlan & { timeout_seconds: number } }
  | { type: 'CompleteRegistration'; data: Record<string, never> }
  /** `email_taken`, `slug_taken` (refused at once) or `timed_out` (released by the process manager). */
  | { type: 'AbandonRegistration'; data: { reason: string } };

export type RegistrationState =
  | { status: 'absent' }
  | ({ status: 'pending' } & RegistrationPlan & { started_at: string; expires_at: string })
  | ({ status: 'completed' } & RegistrationPlan)
  | ({ status: 'abandoned' } & RegistrationPlan & { reason: string });

export const registrationStream = (id: string): string => toStreamName(registrationEvents.category, id);

const planOf = (state: Exclude<RegistrationState, { status: 'absent' }>): RegistrationPlan => ({
  registration_id: state.registration_id,
  user_id: state.user_id,
  tenant_id: state.tenant_id,
  workspace_id: state.workspace_id,
  email_reservation: state.email_reservation,
  slug_reservation: state.slug_reservation,
  organization_name: state.organization_name,
  slug: state.slug,
});

export const registrationDecider: Decider<RegistrationCommand, RegistrationEvent, RegistrationState> = {
  initialState: () => ({ status: 'absent' }),
  evolve(state, event) {
    switch (event.type) {
      case 'RegistrationStarted':
        return { status: 'pending', ...event.data };
      case 'RegistrationCompleted':
        return state.status === 'absent' ? state : { status: 'completed', ...planOf(state) };
      case 'RegistrationAbandoned':
        return state.status === 'absent' ? state : { status: 'abandoned', ...planOf(state), reason: event.data.reason };
    }
  },
  decide(command, state, { now }): Either<DomainError, RegistrationEvent[]> {
    switch (command.type) {
      case 'StartRegistration': {
        // A repeat of the start (a retried step) records nothing new.
        if (state.status !== 'absent') return right([]);
        const { timeout_seconds, ...plan } = command.data;
        const expiresAt = new Date(now.getTime() + timeout_seconds * 1000).toISOString();
        return right([{ type: 'RegistrationStarted', data: { ...plan, started_at: now.toISOString(), expires_at: expiresAt } }]);
      }
      case 'CompleteRegistration':
        switch (state.status) {
          case 'absent':
            return left(notFound('registration_not_found', 'no such registration'));
          case 'abandoned':
            return left(conflict('registration_abandoned', 'this sign-up was abandoned; sign up again'));
          case 'completed':
            return right([]);
          case 'pending':
            return right([{ type: 'RegistrationCompleted', data: { registration_id: state.registration_id, completed_at: now.toISOString() } }]);
        }
      // eslint-disable-next-line no-fallthrough
      case 'AbandonRegistration':
        switch (state.status) {
          case 'absent':
            return left(notFound('registration_not_found', 'no such registration'));
          case 'completed':
            return left(conflict('registration_completed', 'this sign-up is complete'));
          case 'abandoned':
            return right([]);
          case 'pending':
            return right([{ type: 'RegistrationAbandoned', data: { registration_id: state.registration_id, reason: command.data.reason, abandoned_at: now.toISOString() } }]);
        }
    }
  },
};
