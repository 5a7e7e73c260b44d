// The client's address behind reverse proxies (TRUST_PROXY_HOPS): by default X-Forwarded-For is
// ignored (a client could write anything there); with N trusted proxies the client is the entry
// the outermost of them appended, whatever a client wrote before it. It is what the per-address
// rate limits count, what a session shows and what events record, over HTTP and over the
// widget's WebSocket; events record it whole, its network only, or not at all (EVENT_CLIENT_IP).

import { expect } from 'chai';
import { clientIpOf, recordedIpOf } from '../../adapters/http/client-ip';
import { conversationStream } from '../../domain/conversation/conversation';
import { sessionStream } from '../../domain/session/session';
import { userStream } from '../../domain/user/user';
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

  describe('recordedIpOf (EVENT_CLIENT_IP)', () => {
    it('records the address whole, nothing, or its network: an IPv4 address’s last byte zeroed, an IPv6 address cut to 48 bits', () => {
      expect(recordedIpOf(CLIENT, 'full')).to.equal(CLIENT);
      expect(recordedIpOf(CLIENT, 'none')).to.equal(null);
      expect(recordedIpOf(null, 'truncated')).to.equal(null);
      expect(recordedIpOf(CLIENT, 'truncated')).to.equal('203.0.113.0');
      expect(recordedIpOf('::ffff:203.0.113.9', 'truncated')).to.equal('::ffff:203.0.113.0');
      expect(recordedIpOf('2001:db8:85a3:8d3:1319:8a2e:370:7348', 'truncated')).to.equal('2001:db8:85a3::');
      expect(recordedIpOf('2001:0DB8:0000::1', 'truncated')).to.equal('2001:db8:0::');
      expect(recordedIpOf('2001:db8::', 'truncated')).to.equal('2001:db8:0::');
      expect(recordedIpOf('::1', 'truncated')).to.equal('0:0:0::');
      expect(recordedIpOf('fe80::1%eth0', 'truncated')).to.equal('fe80:0:0::');
      // What is no address is not recorded as one.
      expect(recordedIpOf('not an address', 'truncated')).to.equal(null);
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

  describe('recording the client’s network only (EVENT_CLIENT_IP=truncated)', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ SCRYPT_LOG_N: '12', TRUST_PROXY_HOPS: '1', EVENT_CLIENT_IP: 'truncated' });
    });
    after(() => server.close());

    it('records 203.0.113.0 in events and the audit log, while the member’s session still shows where they logged in from', async () => {
      const owner = await registerOwner(server, 'client-ip-truncated', 'client-ip-truncated@example.com');
      const login = await server.request('POST', '/graphql', { headers: { 'x-forwarded-for': CLIENT }, body: { query: LOGIN, variables: { email: owner.email, password: PASSWORD } } });
      const token = login.json.data.login.token;
      const sessions = await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${token}` } });
      const current = sessions.json.items.find((session: { current: boolean }) => session.current);
      expect(current.ip).to.equal(CLIENT);
      const [started] = await server.platform.eventStore.readStream(sessionStream(current.jti));
      expect(started.metadata.ip).to.equal('203.0.113.0');
      const renamed = await server.request('POST', '/graphql', {
        headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': CLIENT },
        body: { query: 'mutation { update_settings(input: {assistant_name: "Ada"}) { assistant_name } }' },
      });
      expect(renamed.json.errors, renamed.text).to.equal(undefined);
      const audit = await server.request('GET', '/api/v1/org/audit-logs?limit=200', { headers: { authorization: `Bearer ${token}` } });
      expect(audit.status, audit.text).to.equal(200);
      expect(audit.text).to.include('203.0.113.0').and.not.include(CLIENT);
    });

    it('over the widget’s WebSocket too', async () => {
      const owner = await registerOwner(server, 'client-ip-truncated-widget');
      const socket = await WidgetSocket.open(server.url, await widgetTokenOf(server, owner), { headers: { 'x-forwarded-for': CLIENT } });
      await socket.resume(newVisitorId());
      const done = (await socket.ask('Hello there')).at(-1);
      await socket.close();
      const events = await server.platform.eventStore.readStream(conversationStream(done.conversation_id));
      expect(events.map((event) => event.metadata.ip)).to.include('203.0.113.0').and.not.include(CLIENT);
    });
  });

  describe('recording no client address (EVENT_CLIENT_IP=none)', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer({ SCRYPT_LOG_N: '12', EVENT_CLIENT_IP: 'none' });
    });
    after(() => server.close());

    it('records none in events, while the member’s session still shows it', async () => {
      const owner = await registerOwner(server, 'client-ip-none', 'client-ip-none@example.com');
      const [registered] = await server.platform.eventStore.readStream(userStream(owner.user_id));
      expect(registered.metadata.ip).to.equal(null);
      const sessions = await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${owner.token}` } });
      expect(sessions.json.items[0].ip).to.be.a('string');
    });
  });
});
