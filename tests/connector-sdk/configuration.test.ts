// Connector configuration (spec 2.6): the secret from options or SVC_SIGNING_SECRET, the
// defaults, rotation secrets, and registration mistakes caught at start-up.
import { expect } from 'chai';
import { ConnectorConfigurationError, createConnector, type Connector } from '../../adapters/connector-sdk';
import { TestClock, protocolBody, signed } from './helpers';

async function ping(connector: Connector, secret: string, path = '/svc', clock = new TestClock()): Promise<number> {
  const request = signed(protocolBody('ping'), { secret, clock });
  return (await connector.handle({ method: 'POST', path, headers: request.headers, rawBody: request.body })).status;
}

describe('connector configuration', () => {
  describe('signing secret', () => {
    it('is required, with an error that says how to give it', () => {
      expect(() => createConnector({ env: {} }))
        .to.throw(ConnectorConfigurationError)
        .with.property('message')
        .that.includes('SVC_SIGNING_SECRET');
    });

    it('refuses empty secrets and an empty rotation list', () => {
      expect(() => createConnector({ signingSecret: '' })).to.throw(ConnectorConfigurationError);
      expect(() => createConnector({ signingSecrets: [] })).to.throw(ConnectorConfigurationError);
      expect(() => createConnector({ signingSecrets: ['a', ''] })).to.throw(ConnectorConfigurationError);
    });

    it('refuses both signingSecret and signingSecrets', () => {
      expect(() => createConnector({ signingSecret: 'a', signingSecrets: ['b'] })).to.throw(/not both/);
    });

    it('is read from SVC_SIGNING_SECRET when not given', async () => {
      const clock = new TestClock();
      const connector = createConnector({ env: { SVC_SIGNING_SECRET: 'from-env' }, now: clock.now });
      expect(await ping(connector, 'from-env', '/svc', clock)).to.equal(200);
      expect(await ping(connector, 'other', '/svc', clock)).to.equal(401);
    });

    it('reads process.env by default', async () => {
      const saved = process.env.SVC_SIGNING_SECRET;
      process.env.SVC_SIGNING_SECRET = 'from-process-env';
      try {
        const clock = new TestClock();
        expect(await ping(createConnector({ now: clock.now }), 'from-process-env', '/svc', clock)).to.equal(200);
      } finally {
        if (saved === undefined) delete process.env.SVC_SIGNING_SECRET;
        else process.env.SVC_SIGNING_SECRET = saved;
      }
    });

    it('accepts SVC_SIGNING_SECRET_PREVIOUS during a rotation', async () => {
      const clock = new TestClock();
      const connector = createConnector({ env: { SVC_SIGNING_SECRET: 'new', SVC_SIGNING_SECRET_PREVIOUS: 'old' }, now: clock.now });
      expect(await ping(connector, 'new', '/svc', clock)).to.equal(200);
      expect(await ping(connector, 'old', '/svc', clock)).to.equal(200);
    });

    it('prefers an explicit secret over the environment', async () => {
      const clock = new TestClock();
      const connector = createConnector({ signingSecret: 'explicit', env: { SVC_SIGNING_SECRET: 'from-env' }, now: clock.now });
      expect(await ping(connector, 'from-env', '/svc', clock)).to.equal(401);
    });
  });

  describe('options', () => {
    it('serves a custom endpoint path only', async () => {
      const clock = new TestClock();
      const connector = createConnector({ signingSecret: 's', endpointPath: '/hooks/assistant', now: clock.now });
      expect(connector.endpointPath).to.equal('/hooks/assistant');
      expect(await ping(connector, 's', '/hooks/assistant', clock)).to.equal(200);
      expect(await ping(connector, 's', '/svc', clock)).to.equal(404);
    });

    it('applies a custom skew window', async () => {
      const clock = new TestClock();
      const connector = createConnector({ signingSecret: 's', maxTimestampSkewSeconds: 10, now: clock.now });
      const fresh = signed(protocolBody('ping'), { secret: 's', timestamp: clock.seconds - 10 });
      const stale = signed(protocolBody('ping'), { secret: 's', timestamp: clock.seconds - 11 });
      expect((await connector.handle({ method: 'POST', path: '/svc', headers: fresh.headers, rawBody: fresh.body })).status).to.equal(200);
      expect((await connector.handle({ method: 'POST', path: '/svc', headers: stale.headers, rawBody: stale.body })).status).to.equal(401);
    });

    it('refuses unusable values', () => {
      expect(() => createConnector({ signingSecret: 's', protocolVersion: '2' as '1' })).to.throw(/protocolVersion/);
      expect(() => createConnector({ signingSecret: 's', endpointPath: 'svc' })).to.throw(/endpointPath/);
      expect(() => createConnector({ signingSecret: 's', maxBodyBytes: 0 })).to.throw(/maxBodyBytes/);
      expect(() => createConnector({ signingSecret: 's', maxTimestampSkewSeconds: -1 })).to.throw(/maxTimestampSkewSeconds/);
      expect(() => createConnector({ signingSecret: 's', resumeTokenTtlSeconds: Number.NaN })).to.throw(/resumeTokenTtlSeconds/);
    });
  });

  describe('tool registration', () => {
    const connector = () => createConnector({ signingSecret: 's' });

    it('refuses a duplicate name, a missing handler and a non-object schema', () => {
      const c = connector().tool('a', { description: 'a', handler: () => ({ output: {} }) });
      expect(() => c.tool('a', { description: 'again', handler: () => ({ output: {} }) })).to.throw(/already registered/);
      expect(() => c.tool('', { description: 'x', handler: () => ({ output: {} }) })).to.throw(/name/);
      expect(() => c.tool('b', { description: 'b' } as never)).to.throw(/handler/);
      expect(() => c.tool('c', { description: 'c', input_schema: { type: 'string' }, handler: () => ({ output: {} }) })).to.throw(/must be 'object'/);
      expect(() => c.tool('d', { description: 'd', input_schema: { type: 'object', properties: { x: { type: 'date' as 'string' } } }, handler: () => ({ output: {} }) })).to.throw(
        /input_schema\.properties\.x\.type/,
      );
      // A keyword the validator would not enforce is refused, not silently ignored.
      expect(() => c.tool('e', { description: 'e', input_schema: { type: 'object', properties: { x: { type: 'string', minlength: 3 } } }, handler: () => ({ output: {} }) })).to.throw(
        /unknown keyword: "minlength"/,
      );
    });

    it('advertises defaults: auth none, chat true, an empty object schema', async () => {
      const clock = new TestClock();
      const c = createConnector({ signingSecret: 's', now: clock.now }).tool('plain', { description: 'p', handler: () => ({ output: {} }) });
      const request = signed(protocolBody('tools.list'), { secret: 's', clock });
      const body = JSON.parse((await c.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: request.body })).body);
      expect(body.tools).to.deep.equal([{ name: 'plain', description: 'p', auth: 'none', chat: true, input_schema: { type: 'object', properties: {} } }]);
    });

    it('a challenge from a tool without a resume handler is an internal error', async () => {
      const clock = new TestClock();
      const reported: unknown[] = [];
      const c = createConnector({ signingSecret: 's', now: clock.now, onError: (error) => reported.push(error) }).tool('half', {
        description: 'h',
        handler: () => ({ challenge: {} }),
      });
      const request = signed(protocolBody('tool.invoke', { tool: 'half' }), { secret: 's', clock });
      const response = await c.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: request.body });
      expect(response.status).to.equal(500);
      expect(String(reported[0])).to.include('no resume handler');
    });
  });

  describe('advertised metadata', () => {
    it('refuses organization event ids with the app. prefix', () => {
      expect(() => createConnector({ signingSecret: 's' }).advertise({ organization: { events: [{ id: 'app.order', label: 'x' }] } })).to.throw(/app\./);
    });

    it('refuses malformed organization entries and lists', () => {
      const c = createConnector({ signingSecret: 's' });
      expect(() => c.advertise({ organization: { tasks: [{ id: 't' } as never] } })).to.throw(/organization\.tasks/);
      expect(() => c.advertise({ flows: ['x' as never] })).to.throw(/flows/);
    });

    it('accumulates lists and merges organization metadata across calls', async () => {
      const clock = new TestClock();
      const c = createConnector({ signingSecret: 's', now: clock.now })
        .advertise({ flows: [{ id: 'a' }], organization: { version: 1, actions: [{ id: 'x', label: 'X' }] } })
        .advertise({ flows: [{ id: 'b' }], schedules: [{ id: 'nightly' }], organization: { version: 2 } });
      const request = signed(protocolBody('capabilities.list'), { secret: 's', clock });
      const body = JSON.parse((await c.handle({ method: 'POST', path: '/svc', headers: request.headers, rawBody: request.body })).body);
      expect(body.flows).to.deep.equal([{ id: 'a' }, { id: 'b' }]);
      expect(body.schedules).to.deep.equal([{ id: 'nightly' }]);
      expect(body.events).to.deep.equal([]);
      expect(body.organization).to.deep.equal({ version: 2, actions: [{ id: 'x', label: 'X' }] });
    });
  });
});
