// Saga `registration` (version 1): finishes or undoes a sign-up that stopped half-way.
//
// `registrationProcess` is the process manager (pure): given the registration's events and
// what the due pass saw of its user and tenant, the next step. A registration still pending
// past its deadline (REGISTRATION_TIMEOUT_SECONDS) is
// - finished, when its user exists (the rest needs no password: tenant, membership,
//   workspace, widget token, verification code), or
// - abandoned otherwise: its email and slug reservations are released (only if still held by
//   its user and tenant; no tenant exists yet, `register` creates it after the user), and
//   `RegistrationAbandoned` is recorded last, so a pass that stops half-way leaves it
//   pending and the next pass does the rest.
// `registrationSaga` runs it from a scan of the `registrations` read model (`runDue`); it
// reacts to no event itself: a registration that completes needs nothing from it.

import type { RegistrationEvent, RegistrationPlan, RegistrationState } from '../../domain/registration/registration';
import { registrationDecider, registrationStream } from '../../domain/registration/registration';
import { userStream } from '../../domain/user/user';
import { REGISTRATIONS, type RegistrationDocument } from '../../projections/registrations';
import { handleCommand, loadAggregate } from '../command-handling/handle-command';
import type { ReadModelDependencies, ReadYourWritesDependencies } from '../shared/read-models';
import { finishRegistration, registrationAggregate } from './register';
import { type OtpDependencies, userAggregate } from '../user/users';
import type { Logger } from '../ports/logger';
import { releaseReservationByKey } from '../reservation/reservations';
import type { ProcessManager } from '../sagas/process-manager';
import { type Saga, forEachConcurrently } from '../sagas/saga';
import { type RequestContext, systemContext } from '../shared/request-context';

export const REGISTRATION = 'registration';

export type RegistrationInput = {
  /** The due scan found the registration pending; with whether its user exists. */
  type: 'RegistrationDue';
  data: { registration_id: string; user_registered: boolean };
};

export type RegistrationOutput =
  /** Run the remaining steps (`finishRegistration`), which records `RegistrationCompleted`. */
  | { type: 'FinishRegistration'; data: RegistrationPlan }
  | { type: 'ReleaseReservation'; data: { key: string; owner_id: string } }
  | { type: 'AbandonRegistration'; data: { reason: string } };

export const registrationProcess: ProcessManager<RegistrationInput, RegistrationEvent, RegistrationState, RegistrationOutput> = {
  initialState: registrationDecider.initialState,
  evolve: registrationDecider.evolve,
  decide(input, state, { now }) {
    // Completed, abandoned, or still within its time: nothing to do.
    if (state.status !== 'pending' || Date.parse(state.expires_at) > now.getTime()) return [];
    const { status: _status, started_at: _started, expires_at: _expires, ...plan } = state;
    if (input.data.user_registered) return [{ type: 'FinishRegistration', data: plan }];
    return [
      { type: 'ReleaseReservation', data: { key: plan.email_reservation, owner_id: plan.user_id } },
      { type: 'ReleaseReservation', data: { key: plan.slug_reservation, owner_id: plan.tenant_id } },
      { type: 'AbandonRegistration', data: { reason: 'timed_out' } },
    ];
  },
};

/** Registrations one due pass looks at; the next pass takes the rest. */
const DUE_PAGE = 100;

export function registrationSaga(deps: OtpDependencies & ReadYourWritesDependencies & ReadModelDependencies, options: { concurrency: number }): Saga<'RegistrationAbandoned'> {
  async function run(registrationId: string): Promise<void> {
    const stream = registrationStream(registrationId);
    const { state } = await loadAggregate(deps, registrationAggregate, stream);
    if (state.status !== 'pending') return;
    const { state: user } = await loadAggregate(deps, userAggregate, userStream(state.user_id));
    const input: RegistrationInput = { type: 'RegistrationDue', data: { registration_id: registrationId, user_registered: user.status === 'registered' } };
    const context: RequestContext = { ...systemContext(registrationId, REGISTRATION, null), tenant_id: state.tenant_id };
    for (const output of registrationProcess.decide(input, state, { now: deps.clock.now() })) {
      switch (output.type) {
        case 'FinishRegistration':
          await finishRegistration(deps, output.data, { ...context, actor: { kind: 'user', id: output.data.user_id } });
          break;
        case 'ReleaseReservation':
          await releaseReservationByKey(deps, output.data.key, output.data.owner_id, context);
          break;
        case 'AbandonRegistration':
          await handleCommand(deps, registrationAggregate, stream, output, context);
          break;
      }
    }
  }

  return {
    name: REGISTRATION,
    version: 1,
    // It acts on time alone (runDue); the subscription is there because every saga has one.
    filter: { kind: 'event_type', types: ['RegistrationAbandoned'] },
    async handle() {},
    async runDue({ logger }: { logger: Logger }) {
      const now = deps.clock.now().toISOString();
      const due = await deps.readStore
        .collection<RegistrationDocument>(REGISTRATIONS)
        .find({ where: { status: 'pending', expires_at: { lte: now } }, sort: { field: 'expires_at', direction: 'asc' }, limit: DUE_PAGE });
      await forEachConcurrently(due.items, options.concurrency, async (registration) => {
        try {
          await run(registration.id);
        } catch (error) {
          // Stays pending: the next pass tries again.
          logger.error({ err: error, registration_id: registration.id }, 'due registration failed');
        }
      });
    },
  };
}
