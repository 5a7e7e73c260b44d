// The client's address behind reverse proxies (TRUST_PROXY_HOPS): by default X-Forwarded-For is
// ignored (a client could write anything there); with N trusted proxies the client is the entry
// the outermost of them appended, whatever a client wrote before it. It is what the per-address
// rate limits count, what a session shows and what events record, over HTTP and over the
// widget's WebSocket.

import { expect } from 'chai';
import { clientIpOf } from '../../adapters/http/client-ip';
import { conversationStream } from '../../domain/conversation/conversation';
import { sessionStream } from '../../domain/session/session';
import { LOGIN, PASSWORD, registerOwner, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { WidgetSocket, newVisitorId } from '../support/widget-socket';

const CLIENT = '203.0.113.9';
const SPOOFED = '198.51.100.7';

describe('the client address behind reverse proxies (TRUST_PROXY_HOPS)', function () {
  this.timeout(60_000);

  describe('clientIpOf (the WebSocket upgrades)', () => {
    const request = (forwarded: string | string[] | undefined) => ({ headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded }, socket: { remoteAddress: '10.0.0.2' } }) as never;

    it('reads the connection’s own address unless proxies are trusted', () => {
      expect(clientIpOf(request(`${SPOOFED}, ${CLIENT}`), 0)).to.equal('10.0.0.2');
      expect(clientIpOf(request(undefined), 1)).to.equal('10.0.0.2');
      expect(clientIpOf(request(' , '), 1)).to.equal('10.0.0.2');
    });

    it('trusts only the entries the platform’s own proxies appended, as Koa does', () => {
      expect(clientIpOf(request(CLIENT), 1)).to.equal(CLIENT);
      expect(clientIpOf(request(`${SPOOFED}, ${CLIENT}`), 1)).to.equal(CLIENT);
      expect(clientIpOf(request(`${SPOOFED}, ${CLIENT}, 10.0.0.1`), 2)).to.equal(CLIENT);
      expect(clientIpOf(request([SPOOFED, CLIENT]), 1)).to.equal(CLIENT);
      // Fewer entries than trusted proxies: the first there is.
      expect(clientIpOf(request(CLIENT), 3)).to.equal(CLIENT);
    });
  });

  describe('with no proxy trusted (the default)', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ SCRYPT_LOG_N: '12' });
    });
    after(() => server.close());

    it('ignores X-Forwarded-For: a session shows the connection’s address', async () => {
      const owner = await registerOwner(server, 'client-ip-default', 'client-ip-default@example.com');
      const login = await server.request('POST', '/graphql', { headers: { 'x-forwarded-for': CLIENT }, body: { query: LOGIN, variables: { email: owner.email, password: PASSWORD } } });
      const token = login.json.data.login.token;
      const sessions = await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${token}` } });
      const current = sessions.json.items.find((session: { current: boolean }) => session.current);
      expect(current.ip).to.be.a('string').and.not.equal(CLIENT);
    });
  });

  describe('behind one trusted proxy', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ SCRYPT_LOG_N: '12', TRUST_PROXY_HOPS: '1', RATE_LIMIT_PER_IP: '3' });
    });
    after(() => server.close());

    it('records the client’s address the proxy appended in the session and its event, not what the client wrote', async () => {
      const owner = await registerOwner(server, 'client-ip-proxied', 'client-ip-proxied@example.com');
      const login = await server.request('POST', '/graphql', { headers: { 'x-forwarded-for': `${SPOOFED}, ${CLIENT}` }, body: { query: LOGIN, variables: { email: owner.email, password: PASSWORD } } });
      expect(login.json.errors, login.text).to.equal(undefined);
      const sessions = await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${login.json.data.login.token}` } });
      const current = sessions.json.items.find((session: { current: boolean }) => session.current);
      expect(current.ip).to.equal(CLIENT);
      const [started] = await server.platform.eventStore.readStream(sessionStream(current.jti));
      expect(started.metadata.ip).to.equal(CLIENT);
      expect(started.data).to.deep.include({ ip: CLIENT });
    });

    it('counts the per-address rate limit per client, not for everyone behind the proxy', async () => {
      const attempt = (client: string) =>
        server.request('POST', '/graphql', { headers: { 'x-forwarded-for': client }, body: { query: LOGIN, variables: { email: `nobody-${client}@example.com`, password: 'wrong password' } } });
      const codeOf = (response: Awaited<ReturnType<typeof attempt>>) => response.json.errors?.[0]?.extensions?.code;
      for (let i = 0; i < 3; i += 1) expect(codeOf(await attempt('192.0.2.10'))).to.equal('invalid_credentials');
      expect(codeOf(await attempt('192.0.2.10'))).to.equal('rate_limited');
      // Another client behind the same proxy still has its budget.
      expect(codeOf(await attempt('192.0.2.11'))).to.equal('invalid_credentials');
    });

    it('records the forwarded client over the widget’s WebSocket too', async () => {
      const owner = await registerOwner(server, 'client-ip-widget');
      const socket = await WidgetSocket.open(server.url, await widgetTokenOf(server, owner), { headers: { 'x-forwarded-for': `${SPOOFED}, ${CLIENT}` } });
      await socket.resume(newVisitorId());
      const done = (await socket.ask('Hello there')).at(-1);
      await socket.close();
      const events = await server.platform.eventStore.readStream(conversationStream(done.conversation_id));
      expect(events.map((event) => event.metadata.ip)).to.include(CLIENT).and.not.include(SPOOFED);
    });
  });
});
