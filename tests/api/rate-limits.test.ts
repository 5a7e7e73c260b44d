import { expect } from 'chai';
import { LOGIN, PASSWORD, REGISTER, gql, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock } from '../support/stores';

describe('rate limits on register, login, OTP and password reset', () => {
  let server: TestServer;
  let clock: ManualClock;
  before(async () => {
    clock = new ManualClock(new Date());
    server = await startTestServer({ SCRYPT_LOG_N: '12', RATE_LIMIT_PER_EMAIL: '3', RATE_LIMIT_PER_IP: '6', RATE_LIMIT_WINDOW_SECONDS: '60' }, { clock });
  });
  after(() => server.close());

  it('answers a wrong password 429 rate_limited with Retry-After past the per-email budget of failures, and records nothing', async () => {
    await registerOwner(server, 'limited-co', 'limited@example.com');
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const wrong = await gql(server, LOGIN, { email: 'limited@example.com', password: 'not the password' });
      expect(wrong.json.errors[0].extensions.code).to.equal('invalid_credentials');
    }
    const limited = await gql(server, LOGIN, { email: 'limited@example.com', password: 'not the password' });
    expect(limited.status).to.equal(429);
    expect(limited.headers.get('retry-after')).to.equal('20');
    expect(limited.json.errors[0].extensions).to.deep.equal({ code: 'rate_limited', status: 429, retry_after_seconds: 20 });
    const failures = await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['LoginFailed'] } });
    expect(failures).to.have.length(3);
    // The right password is not locked out by someone else's failures (#9.6).
    expect((await gql(server, LOGIN, { email: 'limited@example.com', password: PASSWORD })).json.data.login.token).to.be.a('string');
  });

  it('limits per IP across emails, per action', async () => {
    const responses = [];
    for (let index = 0; index < 7; index += 1) {
      responses.push(await gql(server, 'mutation ($email: String!) { request_password_reset(email: $email) }', { email: `reset-${index}@example.com` }));
    }
    expect(responses.slice(0, 6).every((response) => response.status === 200)).to.equal(true);
    expect(responses[6].status).to.equal(429);
    // Another action has its own budget.
    const register = await gql(server, REGISTER, { email: 'fresh@example.com', password: PASSWORD, name: 'F', organization_name: 'Fresh Org' });
    expect(register.status).to.equal(200);
  });
});

describe('account lock: failures cannot lock out the right password (#9.6)', () => {
  let server: TestServer;
  let clock: ManualClock;
  const email = 'target@example.com';
  const wrong = () => gql(server, LOGIN, { email, password: 'someone guessing' });
  const right = () => gql(server, LOGIN, { email, password: PASSWORD });
  before(async () => {
    clock = new ManualClock(new Date());
    server = await startTestServer({ SCRYPT_LOG_N: '10', RATE_LIMIT_PER_EMAIL: '10', RATE_LIMIT_WINDOW_SECONDS: '900' }, { clock });
    await registerOwner(server, 'target-co', email);
  });
  after(() => server.close());

  it('lets the right password through after 11 wrong ones, and refuses it only past 10 times the budget', async () => {
    const codes: string[] = [];
    for (let attempt = 0; attempt < 11; attempt += 1) codes.push((await wrong()).json.errors[0].extensions.code);
    expect(codes).to.deep.equal([...Array(10).fill('invalid_credentials'), 'rate_limited']);
    const through = await right();
    expect(through.status).to.equal(200);
    expect(through.json.data.login.token).to.be.a('string');

    // 100 failures (10 x the budget of 10) in all: now even the right password waits.
    for (let attempt = 11; attempt < 100; attempt += 1) expect((await wrong()).status).to.equal(429);
    const locked = await right();
    expect(locked.status).to.equal(429);
    expect(locked.json.errors[0].extensions).to.deep.equal({ code: 'rate_limited', status: 429, retry_after_seconds: 9 });
    clock.advance(9_000);
    expect((await right()).json.data.login.token).to.be.a('string');
  });
});
