// One-click unsubscribe links over HTTP (GET, POST /notifications/unsubscribe?token=...): the
// page asks and changes nothing; a POST (the page's form, or a mail client's RFC 8058 request)
// turns the person's preference off, recorded as theirs; a token the platform did not make is
// 400 and records nothing, 429 past the budget of wrong ones; a person who left is 404. The
// links in the alert emails themselves are tested with them (orchestration-dispatch.test.ts).

import { expect } from 'chai';
import { UNSUBSCRIBE_PATH, unsubscribeToken } from '../../application/notification/unsubscribe-links';
import { notificationPreferencesStream } from '../../domain/notification-preferences/notification-preferences';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';

const ONE_CLICK_BOUNDARY = '---FormBoundaryjWmhtjORrn';
/** The body of RFC 8058's example request. */
const ONE_CLICK_MULTIPART = `--${ONE_CLICK_BOUNDARY}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${ONE_CLICK_BOUNDARY}--\r\n`;
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

describe('unsubscribe links (GET, POST /notifications/unsubscribe)', () => {
  let server: TestServer;
  let owner: Account;
  let admin: Account;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const tokenOf = (account: Account, tenantId = owner.tenant_id): string =>
    unsubscribeToken(server.platform.secrets, { tenant_id: tenantId, user_id: account.user_id, kind: 'orchestration_alerts' });
  const link = (token: string): string => `${UNSUBSCRIBE_PATH}?token=${encodeURIComponent(token)}`;
  const preferenceOf = async (account: Account): Promise<boolean> => (await server.request('GET', '/api/v1/me/notifications', { headers: as(account) })).json.orchestration_alerts;
  const oneClick = (token: string, headers: Record<string, string> = {}): Promise<TestResponse> =>
    server.request('POST', link(token), { headers: { 'content-type': `multipart/form-data; boundary=${ONE_CLICK_BOUNDARY}`, ...headers }, rawBody: ONE_CLICK_MULTIPART });
  const expectError = (response: TestResponse, status: number, code: string, field?: string): void => {
    expect(response.status, response.text).to.equal(status);
    expect(response.json).to.include({ code, ...(field ? { field } : {}) });
    expect(response.json.message).to.be.a('string').and.not.equal('');
  };

  before(async () => {
    // One proxy hop: each test's client address is its own (the budget of wrong tokens is per address).
    server = await startTestServer({ SCRYPT_LOG_N: '12', TRUST_PROXY_HOPS: '1' });
    owner = await registerOwner(server, 'unsub-org');
    admin = await joinAs(server, await registerOwner(server, 'unsub-adm'), owner.tenant_id, 'admin');
  });
  after(() => server.close());

  it('shows a browser a page that names the organization and the emails and asks, changing nothing; other clients get JSON', async () => {
    const page = await server.request('GET', link(tokenOf(owner)), { headers: BROWSER });
    expect(page.status, page.text).to.equal(200);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.text).to.contain('Stop the alert emails about orchestration events that were dead-lettered or expired from Org unsub-org?');
    expect(page.text).to.match(/<form method="post">.*name="List-Unsubscribe" value="One-Click".*<button type="submit" id="unsubscribe">Unsubscribe<\/button><\/form>/s);
    // The token is in the URL: no Referer carries it on, no cache keeps it, no site frames the button.
    expect(page.headers.get('referrer-policy')).to.equal('no-referrer');
    expect(page.headers.get('cache-control')).to.equal('no-store');
    expect(page.headers.get('content-security-policy')).to.contain("frame-ancestors 'none'").and.contain("default-src 'none'");
    expect(await page.events()).to.deep.equal([]);

    const json = await server.request('GET', link(tokenOf(owner)));
    expect(json.status, json.text).to.equal(200);
    expect(json.json).to.deep.equal({
      organization: 'Org unsub-org',
      preference: 'orchestration_alerts',
      emails: 'alert emails about orchestration events that were dead-lettered or expired',
      unsubscribed: false,
    });
    expect(await preferenceOf(owner)).to.equal(true);
  });

  it('unsubscribes with one click (RFC 8058), recorded as the person; again, the same answer and nothing recorded', async () => {
    const done = await oneClick(tokenOf(admin));
    expect(done.status, done.text).to.equal(200);
    expect(done.json).to.include({ organization: 'Org unsub-org', preference: 'orchestration_alerts', unsubscribed: true });
    expect(await done.events()).to.deep.equal(['NotificationPreferencesChanged@notificationPreferences']);
    const [changed] = await server.platform.eventStore.readStream(notificationPreferencesStream(owner.tenant_id, admin.user_id));
    expect(changed.data).to.deep.include({ tenant_id: owner.tenant_id, user_id: admin.user_id, orchestration_alerts: false });
    expect(changed.metadata).to.deep.include({ tenant_id: owner.tenant_id, actor: { kind: 'user', id: admin.user_id } });
    expect(await preferenceOf(admin)).to.equal(false);
    // Only theirs: the owner still gets them.
    expect(await preferenceOf(owner)).to.equal(true);

    const again = await oneClick(tokenOf(admin));
    expect([again.status, again.json.unsubscribed]).to.deep.equal([200, true]);
    expect(await again.events()).to.deep.equal([]);
    // A body is not needed; the page now says it is done.
    const bare = await server.request('POST', link(tokenOf(admin)));
    expect([bare.status, bare.json.unsubscribed]).to.deep.equal([200, true]);
    const page = await server.request('GET', link(tokenOf(admin)), { headers: BROWSER });
    expect(page.text).to.contain('You will get no more alert emails about orchestration events that were dead-lettered or expired from Org unsub-org.');

    // Turned on again by the person, the same link turns them off again.
    expect((await server.request('PATCH', '/api/v1/me/notifications', { headers: as(admin), body: { orchestration_alerts: true } })).status).to.equal(200);
    expect((await oneClick(tokenOf(admin))).json.unsubscribed).to.equal(true);
    expect(await preferenceOf(admin)).to.equal(false);
  });

  it('turns off only the preference its link names', async () => {
    const token = unsubscribeToken(server.platform.secrets, { tenant_id: owner.tenant_id, user_id: owner.user_id, kind: 'handoff_failures' });
    const done = await oneClick(token);
    expect(done.json).to.deep.equal({ organization: 'Org unsub-org', preference: 'handoff_failures', emails: 'emails about handoffs the handoff webhook never took', unsubscribed: true });
    const preferences = (await server.request('GET', '/api/v1/me/notifications', { headers: as(owner) })).json;
    expect([preferences.handoff_failures, preferences.orchestration_alerts]).to.deep.equal([false, true]);
    expect((await server.request('PATCH', '/api/v1/me/notifications', { headers: as(owner), body: { handoff_failures: true } })).status).to.equal(200);
  });

  it("answers the page's own form (a browser's form post) with a page", async () => {
    const done = await server.request('POST', link(tokenOf(owner)), {
      headers: { ...BROWSER, 'content-type': 'application/x-www-form-urlencoded' },
      rawBody: 'List-Unsubscribe=One-Click',
    });
    expect(done.status, done.text).to.equal(200);
    expect(done.headers.get('content-type')).to.match(/^text\/html/);
    expect(done.text).to.contain('<h1>Unsubscribed</h1>').and.contain('from Org unsub-org.');
    expect(await preferenceOf(owner)).to.equal(false);
    expect((await server.request('PATCH', '/api/v1/me/notifications', { headers: as(owner), body: { orchestration_alerts: true } })).status).to.equal(200);
  });

  it('refuses a token the platform did not make with 400 naming the token, as JSON or as a page, recording nothing', async () => {
    const [payload, digest] = tokenOf(owner).split('.');
    const otherPayload = tokenOf(admin).split('.')[0];
    const forged = [
      `${otherPayload}.${digest}`, // another person's target under this one's digest
      `${payload}.${'0'.repeat(64)}`,
      `${payload}.${digest.slice(0, 63)}`,
      `${payload}`,
      'not a token',
      `${Buffer.from(JSON.stringify([owner.tenant_id, owner.user_id, 'marketing'])).toString('base64url')}.${digest}`,
    ];
    for (const token of forged) {
      const headers = { 'x-forwarded-for': '198.51.100.1' };
      const read = await server.request('GET', link(token), { headers });
      expectError(read, 400, 'invalid_unsubscribe_link', 'token');
      const posted = await server.request('POST', link(token), { headers });
      expectError(posted, 400, 'invalid_unsubscribe_link', 'token');
      expect(await posted.events()).to.deep.equal([]);
    }
    const page = await server.request('POST', link('not a token'), { headers: { ...BROWSER, 'x-forwarded-for': '198.51.100.2' } });
    expect(page.status).to.equal(400);
    expect(page.headers.get('content-type')).to.match(/^text\/html/);
    expect(page.text).to.contain('This link is not valid').and.contain('copy the whole link from the email');
    // No token at all.
    expectError(await server.request('POST', UNSUBSCRIBE_PATH), 400, 'invalid_request', 'token');
    expectError(await server.request('GET', `${UNSUBSCRIBE_PATH}?token=`), 400, 'invalid_request', 'token');
    expect(await preferenceOf(owner)).to.equal(true);
  });

  it('is 404 for a person no longer in the organization', async () => {
    const leaving = await joinAs(server, await registerOwner(server, 'unsub-leaver'), owner.tenant_id, 'admin');
    const token = tokenOf(leaving);
    expect((await oneClick(token)).status).to.equal(200);
    const removed = await server.request('DELETE', `/api/v1/team/members/${leaving.user_id}`, { headers: as(owner) });
    expect(removed.status, removed.text).to.be.oneOf([200, 204]);
    expectError(await server.request('GET', link(token)), 404, 'not_found');
    const posted = await oneClick(token);
    expectError(posted, 404, 'not_found');
    expect(await posted.events()).to.deep.equal([]);
    // A right digest for an organization that does not exist.
    expectError(await oneClick(tokenOf(owner, 'tenant-that-never-was')), 404, 'not_found');
  });

  it('refuses a body of another type (415) or over 4 KiB (413), recording nothing', async () => {
    const json = await server.request('POST', link(tokenOf(owner)), { body: { 'List-Unsubscribe': 'One-Click' } });
    expectError(json, 415, 'unsupported_media_type');
    const large = await server.request('POST', link(tokenOf(owner)), { headers: { 'content-type': 'application/x-www-form-urlencoded' }, rawBody: `List-Unsubscribe=One-Click&pad=${'x'.repeat(5000)}` });
    expectError(large, 413, 'payload_too_large');
    expect(await preferenceOf(owner)).to.equal(true);
  });

  it('is 429 past 20 wrong tokens a minute from one address, with Retry-After; a right link still works from it', async () => {
    const headers = { 'x-forwarded-for': '203.0.113.77' };
    for (let wrong = 1; wrong <= 20; wrong += 1) expectError(await server.request('POST', link(`wrong-${wrong}`), { headers }), 400, 'invalid_unsubscribe_link', 'token');
    const limited = await server.request('POST', link('wrong-21'), { headers });
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
    const page = await server.request('GET', link('wrong-22'), { headers: { ...headers, ...BROWSER } });
    expect(page.status).to.equal(429);
    expect(page.text).to.contain('Too many attempts');
    // Mail providers send many people's one-click requests from one address: a right one is never refused.
    const right = await oneClick(tokenOf(owner), headers);
    expect([right.status, right.json.unsubscribed]).to.deep.equal([200, true]);
    // Another address has its own budget.
    expectError(await server.request('POST', link('wrong-1'), { headers: { 'x-forwarded-for': '203.0.113.78' } }), 400, 'invalid_unsubscribe_link', 'token');
  });
});
