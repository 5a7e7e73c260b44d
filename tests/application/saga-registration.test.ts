// The registration process manager given/when/then: a registration still pending past its
// deadline is finished when its user exists and released otherwise; anything completed,
// abandoned or still within its time asks for nothing. And the registration decider's rules.

import { registrationProcess } from '../../application/registration/registration-process';
import type { RegistrationEvent, RegistrationPlan } from '../../domain/registration/registration';
import { registrationDecider } from '../../domain/registration/registration';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';
import { processManagerSpec } from '../support/process-manager-spec';

const plan: RegistrationPlan = {
  registration_id: 'reg-1',
  user_id: 'user-1',
  tenant_id: 'tenant-1',
  workspace_id: 'workspace-1',
  email_reservation: 'email-key',
  slug_reservation: 'slug-key',
  organization_name: 'Analytical Engines',
  slug: 'engines',
};
const at = (minutes: number): string => new Date(FIXED_NOW.getTime() + minutes * 60_000).toISOString();
const started: RegistrationEvent = { type: 'RegistrationStarted', data: { ...plan, started_at: at(-20), expires_at: at(-5) } };
const due = (facts: { user_registered: boolean }) => ({ type: 'RegistrationDue' as const, data: { registration_id: 'reg-1', ...facts } });

describe('registration process manager', () => {
  const spec = processManagerSpec(registrationProcess);

  it('finishes a registration past its deadline whose user exists', () => {
    spec.given([started]).when(due({ user_registered: true })).then([{ type: 'FinishRegistration', data: plan }]);
  });

  it('releases the email and slug of one whose user does not exist, and records the abandonment last', () => {
    spec
      .given([started])
      .when(due({ user_registered: false }))
      .then([
        { type: 'ReleaseReservation', data: { key: 'email-key', owner_id: 'user-1' } },
        { type: 'ReleaseReservation', data: { key: 'slug-key', owner_id: 'tenant-1' } },
        { type: 'AbandonRegistration', data: { reason: 'timed_out' } },
      ]);
  });

  it('asks nothing before the deadline', () => {
    const fresh: RegistrationEvent = { type: 'RegistrationStarted', data: { ...plan, started_at: at(0), expires_at: at(15) } };
    spec.given([fresh]).when(due({ user_registered: false })).thenNothingHappened();
    spec.given([fresh]).when(due({ user_registered: false }), new Date(Date.parse(at(15)))).then([
      { type: 'ReleaseReservation', data: { key: 'email-key', owner_id: 'user-1' } },
      { type: 'ReleaseReservation', data: { key: 'slug-key', owner_id: 'tenant-1' } },
      { type: 'AbandonRegistration', data: { reason: 'timed_out' } },
    ]);
  });

  it('asks nothing for a completed or abandoned registration, or one it does not know (a repeated pass)', () => {
    const completed: RegistrationEvent = { type: 'RegistrationCompleted', data: { registration_id: 'reg-1', completed_at: at(-10) } };
    const abandoned: RegistrationEvent = { type: 'RegistrationAbandoned', data: { registration_id: 'reg-1', reason: 'timed_out', abandoned_at: at(-1) } };
    spec.given([started, completed]).when(due({ user_registered: true })).thenNothingHappened();
    spec.given([started, abandoned]).when(due({ user_registered: false })).thenNothingHappened();
    spec.given([]).when(due({ user_registered: false })).thenNothingHappened();
  });
});

describe('registration decider', () => {
  const spec = deciderSpec(registrationDecider);
  const startedNow: RegistrationEvent = { type: 'RegistrationStarted', data: { ...plan, started_at: at(0), expires_at: at(15) } };

  it('starts once, with its deadline; a repeated start records nothing', () => {
    spec.given([]).when({ type: 'StartRegistration', data: { ...plan, timeout_seconds: 900 } }).then([startedNow]);
    spec.given([startedNow]).when({ type: 'StartRegistration', data: { ...plan, timeout_seconds: 900 } }).thenNothingHappened();
  });

  it('completes a pending registration once, and refuses to complete an abandoned one', () => {
    const completed: RegistrationEvent = { type: 'RegistrationCompleted', data: { registration_id: 'reg-1', completed_at: at(0) } };
    spec.given([startedNow]).when({ type: 'CompleteRegistration', data: {} }).then([completed]);
    spec.given([startedNow, completed]).when({ type: 'CompleteRegistration', data: {} }).thenNothingHappened();
    const abandoned: RegistrationEvent = { type: 'RegistrationAbandoned', data: { registration_id: 'reg-1', reason: 'timed_out', abandoned_at: at(0) } };
    spec.given([startedNow, abandoned]).when({ type: 'CompleteRegistration', data: {} }).thenThrows('conflict', 'registration_abandoned');
  });

  it('abandons a pending registration once, and refuses to abandon a completed one', () => {
    const abandoned: RegistrationEvent = { type: 'RegistrationAbandoned', data: { registration_id: 'reg-1', reason: 'email_taken', abandoned_at: at(0) } };
    spec.given([startedNow]).when({ type: 'AbandonRegistration', data: { reason: 'email_taken' } }).then([abandoned]);
    spec.given([startedNow, abandoned]).when({ type: 'AbandonRegistration', data: { reason: 'timed_out' } }).thenNothingHappened();
    const completed: RegistrationEvent = { type: 'RegistrationCompleted', data: { registration_id: 'reg-1', completed_at: at(0) } };
    spec.given([startedNow, completed]).when({ type: 'AbandonRegistration', data: { reason: 'timed_out' } }).thenThrows('conflict', 'registration_completed');
  });
});
