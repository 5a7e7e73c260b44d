// Resume tokens: sealed under a key derived from the signing secret, expiring and
// single-use, so any replica can resume a challenge; a shared ledger makes single-use hold
// across replicas too.
import { expect } from 'chai';
import { createConnector, InProcessResumeTokenLedger, type Connector, type ResumeTokenLedger } from '../../adapters/connector-sdk';
import { ResumeTokenSealer, deriveResumeTokenKey } from '../../adapters/connector-sdk/resume-tokens';
import { TestClock, protocolBody, signed } from './helpers';

const SECRET = 'replica-shared-secret';

function replica(clock: TestClock, ledger?: ResumeTokenLedger): Connector {
  return createConnector({ signingSecret: SECRET, now: clock.now, resumeTokenLedger: ledger, onError: () => undefined }).tool('step_up', {
    description: 'Challenges, then answers',
    handler: () => ({ challenge: { kind: 'confirm' }, state: { n: 42 } }),
    resume: (_context, { state, challenge_response }) => ({ output: { state, challenge_response } }),
  });
}

async function call(connector: Connector, clock: TestClock, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  const request = signed(body, { secret: SECRET, clock });
  const response = await connector.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: request.body });
  return JSON.parse(response.body) as Record<string, unknown>;
}

async function challenge(connector: Connector, clock: TestClock): Promise<string> {
  const body = await call(connector, clock, protocolBody('tool.invoke', { tool: 'step_up' }));
  expect(body.type).to.equal('challenge');
  return body.resume_token as string;
}

const resume = (token: string) => protocolBody('tool.resume', { tool: 'step_up', resume_token: token, challenge_response: 'yes' });

/** A ledger shared by replicas, standing in for Redis SET NX or a unique-key insert. */
class SharedLedger implements ResumeTokenLedger {
  readonly used = new Map<string, Date>();
  async markUsed(tokenId: string, expiresAt: Date): Promise<boolean> {
    if (this.used.has(tokenId)) return false;
    this.used.set(tokenId, expiresAt);
    return true;
  }
}

describe('resume tokens', () => {
  describe('sealing', () => {
    it('round-trips tool, organization, expiry and state', () => {
      const clock = new TestClock();
      const sealer = new ResumeTokenSealer([SECRET], 600_000, clock.now);
      const { token, payload } = sealer.seal('step_up', { n: 1 }, 'org-1');
      expect(sealer.open(token)).to.deep.equal({ status: 'valid', payload });
      expect(payload).to.include({ tool: 'step_up', org: 'org-1', exp: clock.ms + 600_000 });
    });

    it('hides the state from whoever holds the token', () => {
      const sealer = new ResumeTokenSealer([SECRET], 600_000, Date.now);
      const { token } = sealer.seal('step_up', { otp: '918273' }, undefined);
      expect(Buffer.from(token, 'base64url').toString('latin1')).to.not.include('918273');
    });

    it('derives different keys from different secrets', () => {
      expect(deriveResumeTokenKey('a').equals(deriveResumeTokenKey('b'))).to.equal(false);
      expect(deriveResumeTokenKey('a')).to.have.length(32);
    });

    it('opens tokens of every configured secret but seals with the first', () => {
      const clock = new TestClock();
      const old = new ResumeTokenSealer(['old'], 600_000, clock.now);
      const rotated = new ResumeTokenSealer(['new', 'old'], 600_000, clock.now);
      const onlyNew = new ResumeTokenSealer(['new'], 600_000, clock.now);
      expect(rotated.open(old.seal('t', null, undefined).token).status).to.equal('valid');
      expect(onlyNew.open(rotated.seal('t', null, undefined).token).status).to.equal('valid');
      expect(onlyNew.open(old.seal('t', null, undefined).token).status).to.equal('unknown');
    });

    it('treats garbage as unknown', () => {
      const sealer = new ResumeTokenSealer([SECRET], 600_000, Date.now);
      for (const token of ['', 'x', '!!!', Buffer.alloc(64).toString('base64url')]) {
        expect(sealer.open(token).status, token).to.equal('unknown');
      }
    });

    it('expires after its lifetime, not before', () => {
      const clock = new TestClock();
      const sealer = new ResumeTokenSealer([SECRET], 600_000, clock.now);
      const { token } = sealer.seal('t', null, undefined);
      clock.ms += 600_000;
      expect(sealer.open(token).status).to.equal('valid');
      clock.ms += 1;
      expect(sealer.open(token).status).to.equal('expired');
    });
  });

  describe('in-process ledger', () => {
    it('accepts an id once and forgets it after its expiry', async () => {
      const clock = new TestClock();
      const ledger = new InProcessResumeTokenLedger(clock.now, 1000);
      expect(await ledger.markUsed('a', new Date(clock.ms + 5000))).to.equal(true);
      expect(await ledger.markUsed('a', new Date(clock.ms + 5000))).to.equal(false);
      clock.advanceSeconds(10);
      ledger.markUsedNow('b', clock.ms + 5000);
      expect(ledger.size).to.equal(1);
    });
  });

  describe('across replicas', () => {
    it('any replica with the secret resumes a challenge another replica issued', async () => {
      const clock = new TestClock();
      const token = await challenge(replica(clock), clock);
      const answer = await call(replica(clock), clock, resume(token));
      expect(answer).to.deep.equal({ type: 'result', output: { state: { n: 42 }, challenge_response: 'yes' } });
    });

    it('with a shared ledger a token used on one replica is refused on another', async () => {
      const clock = new TestClock();
      const ledger = new SharedLedger();
      const [a, b] = [replica(clock, ledger), replica(clock, ledger)];
      const token = await challenge(a, clock);
      expect((await call(b, clock, resume(token))).type).to.equal('result');
      expect(await call(a, clock, resume(token))).to.include({ type: 'error', code: 'not_found' });
      expect([...ledger.used.values()][0].getTime()).to.equal(clock.ms + 600_000);
    });

    it('without a shared ledger single use holds per replica only (the documented trade-off)', async () => {
      const clock = new TestClock();
      const [a, b] = [replica(clock), replica(clock)];
      const token = await challenge(a, clock);
      expect((await call(a, clock, resume(token))).type).to.equal('result');
      expect(await call(a, clock, resume(token))).to.include({ type: 'error', code: 'not_found' });
      expect((await call(b, clock, resume(token))).type).to.equal('result');
    });

    it('a failing ledger is an internal error, not a resumed call', async () => {
      const clock = new TestClock();
      const broken: ResumeTokenLedger = { markUsed: () => Promise.reject(new Error('redis down')) };
      const connector = replica(clock, broken);
      const token = await challenge(connector, clock);
      const request = signed(resume(token), { secret: SECRET, clock });
      const response = await connector.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: request.body });
      expect(response.status).to.equal(500);
      expect(JSON.parse(response.body)).to.deep.equal({ type: 'error', code: 'internal_error', message: 'Internal error' });
    });

    it('honours a configured lifetime', async () => {
      const clock = new TestClock();
      const connector = createConnector({ signingSecret: SECRET, now: clock.now, resumeTokenTtlSeconds: 30 }).tool('step_up', {
        description: 'x',
        handler: () => ({ challenge: {} }),
        resume: () => ({ output: {} }),
      });
      const token = await challenge(connector, clock);
      clock.advanceSeconds(31);
      expect(await call(connector, clock, resume(token))).to.include({ type: 'error', code: 'not_found' });
    });
  });
});
