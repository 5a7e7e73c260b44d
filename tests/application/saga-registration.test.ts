// The registration process manager given/when/then: a registration still pending past its
// deadline is finished when its user exists and released otherwise; anything completed,
// abandoned or still within its time asks for nothing. The registration decider's rules. And
// the saga's due pass over a platform: a stopped sign-up is released or completed once.

import { expect } from 'chai';
import { register } from '../../application/registration/register';
import { registrationProcess } from '../../application/registration/registration-process';
import type { RegistrationEvent, RegistrationPlan } from '../../domain/registration/registration';
import { registrationDecider } from '../../domain/registration/registration';
import { FIXED_NOW, deciderSpec } from '../support/decider-spec';
import { EMAILS, type EmailDocument } from '../../projections/emails';
import { userContext } from '../support/context';
import { PASSWORD } from '../support/identity';
import { processManagerSpec } from '../support/process-manager-spec';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';

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

describe('registration saga (due pass over a platform)', function () {
  this.timeout(30_000);
  const clock = new ManualClock();
  let server: TestServer;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' }, { clock, sagaRetryPollMs: 0 });
  });
  after(() => server.close());

  /** register() whose writes stop, as a crash would, after the `writes`th append; the registration's stream. */
  async function stopAfter(writes: number, email: string, slug: string): Promise<string> {
    let appended = 0;
    let registration = '';
    const store = server.platform.identity.eventStore;
    const stopping = new Proxy(store, {
      get(target, property, receiver) {
        if (property !== 'appendToStream') {
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (...args: Parameters<typeof store.appendToStream>) => {
          if (appended === writes) throw new Error('the process stopped');
          appended += 1;
          if (args[0].startsWith('registration-')) registration ||= args[0];
          return target.appendToStream(...args);
        };
      },
    });
    const stopped = await register({ ...server.platform.identity, eventStore: stopping }, { email, password: PASSWORD, name: 'Ada', organization_name: 'Engines', slug }, userContext()).then(
      () => null,
      (error: Error) => error,
    );
    expect(stopped?.message).to.equal('the process stopped');
    return registration;
  }

  const typesOf = async (stream: string): Promise<string[]> => (await server.platform.eventStore.readStream(stream)).map((event) => event.type);
  async function duePasses(count: number): Promise<void> {
    expect(await server.platform.projections.waitFor(await server.platform.eventStore.headPosition(), { timeoutMs: 10_000 })).to.equal(true);
    for (let pass = 0; pass < count; pass += 1) await server.platform.sagas.runDue();
  }

  it('keeps a stopped sign-up\'s email until its deadline, then releases it once, however many passes run', async () => {
    const stream = await stopAfter(2, 'stopped@example.com', 'stopped-org');
    await duePasses(1);
    expect(await typesOf(stream)).to.deep.equal(['RegistrationStarted']);
    // Before the deadline the claim stands: a new sign-up does not take it over.
    const early = await register(server.platform.identity, { email: 'stopped@example.com', password: PASSWORD, name: 'Ada', organization_name: 'Engines', slug: 'other-org' }, userContext()).catch((error) => error);
    expect(early.code).to.equal('email_taken');
    clock.advance(15 * 60_000);
    await duePasses(2);
    expect(await typesOf(stream)).to.deep.equal(['RegistrationStarted', 'RegistrationAbandoned']);
    const again = await register(server.platform.identity, { email: 'stopped@example.com', password: PASSWORD, name: 'Ada', organization_name: 'Engines', slug: 'stopped-org' }, userContext());
    expect(again.user_id).to.be.a('string');
  });

  it('completes a stopped sign-up whose user exists once, however many passes run', async () => {
    const stream = await stopAfter(4, 'halfway@example.com', 'halfway-org');
    const [{ data }] = await server.platform.eventStore.readStream(stream, { maxCount: 1 });
    const { tenant_id } = data as RegistrationPlan;
    clock.advance(15 * 60_000);
    await duePasses(2);
    expect(await typesOf(stream)).to.deep.equal(['RegistrationStarted', 'RegistrationCompleted']);
    expect(await typesOf(`membership-${tenant_id}`)).to.deep.equal(['MemberJoined']);
    expect(await typesOf(`tenant-${tenant_id}`)).to.deep.equal(['TenantCreated', 'WidgetTokenRotated']);
    await duePasses(0);
    const emails = await server.platform.readStore.collection<EmailDocument>(EMAILS).find({ where: { to: 'halfway@example.com' } });
    expect(emails.items.map((email) => email.kind)).to.deep.equal(['email_verification']);
  });
});
