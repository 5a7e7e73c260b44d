// A person's notification preferences over HTTP (GET, PATCH /api/v1/me/notifications, and
// GraphQL's notification_preferences and update_notification_preferences): any
// member reads and sets their own, in the organization of their token only; a bad body is 400
// naming the field and records nothing; If-Match guards a change; every change is audited.
// What a preference does to the emails is tested with them (orchestration-dispatch.test.ts,
// the alert emails).

import { expect } from 'chai';
import { notificationPreferencesStream } from '../../domain/notification-preferences/notification-preferences';
import { expectEveryEventAudited } from '../support/audit';
import { type Account, joinAs, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

const PATH = '/api/v1/me/notifications';

describe('notification preferences (GET, PATCH /api/v1/me/notifications)', () => {
  let server: TestServer;
  let owner: Account;
  let member: Account;
  /** The member's token in their own organization. */
  let memberAtHome: Account;
  const as = (account: Account, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${account.token}`, ...extra });
  const patch = (account: Account, body: unknown, extra: Record<string, string> = {}) => server.request('PATCH', PATH, { headers: as(account, extra), body });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12' });
    owner = await registerOwner(server, 'notify-org');
    memberAtHome = await registerOwner(server, 'notify-mem-home', 'notify-mem@example.com');
    member = await joinAs(server, memberAtHome, owner.tenant_id, 'member');
  });
  after(() => server.close());

  it('needs a user token: 401 without one', async () => {
    expect((await server.request('GET', PATH)).status).to.equal(401);
    const refused = await server.request('PATCH', PATH, { body: { orchestration_alerts: false } });
    expect(refused.status).to.equal(401);
    expect(refused.json.code).to.be.a('string');
    expect(await refused.events()).to.deep.equal([]);
  });

  it('answers the defaults before any change, version "-1"', async () => {
    const read = await server.request('GET', PATH, { headers: as(owner) });
    expect(read.status, read.text).to.equal(200);
    expect(read.json).to.deep.equal({ orchestration_alerts: true, handoff_failures: true, crm_failures: true, knowledge_gaps: true, updated_at: null });
    expect(read.headers.get('etag')).to.equal('"-1"');
  });

  it('lets a member turn an email off for themselves, in this organization only; the same again records nothing', async () => {
    const off = await patch(member, { orchestration_alerts: false });
    expect(off.status, off.text).to.equal(200);
    expect(off.json.orchestration_alerts).to.equal(false);
    expect(off.json.updated_at).to.be.a('string');
    expect(off.headers.get('etag')).to.equal('"0"');
    expect(await off.events()).to.deep.equal(['NotificationPreferencesChanged@notificationPreferences']);
    const [event] = await server.platform.eventStore.readStream(notificationPreferencesStream(owner.tenant_id, member.user_id));
    expect(event.data).to.deep.include({ tenant_id: owner.tenant_id, user_id: member.user_id, orchestration_alerts: false });
    expect(event.metadata.actor).to.deep.equal({ kind: 'user', id: member.user_id });

    expect((await server.request('GET', PATH, { headers: as(member) })).json.orchestration_alerts).to.equal(false);
    // Their own organization, and the owner of this one, keep the defaults.
    expect((await server.request('GET', PATH, { headers: as(memberAtHome) })).json).to.deep.equal({ orchestration_alerts: true, handoff_failures: true, crm_failures: true, knowledge_gaps: true, updated_at: null });
    expect((await server.request('GET', PATH, { headers: as(owner) })).json.orchestration_alerts).to.equal(true);

    const again = await patch(member, { orchestration_alerts: false });
    expect(again.status).to.equal(200);
    expect(again.headers.get('etag')).to.equal('"0"');
    expect(await again.events()).to.deep.equal([]);
    const nothing = await patch(member, {});
    expect(nothing.json).to.deep.equal(off.json);
    expect(await nothing.events()).to.deep.equal([]);
  });

  it('refuses a bad body with 400 naming the field, recording nothing', async () => {
    for (const [body, field] of [
      [{ orchestration_alerts: 'no' }, 'orchestration_alerts'],
      [{ orchestration_alerts: null }, 'orchestration_alerts'],
      [{ orchestration_alert: false }, 'orchestration_alert'],
    ] as const) {
      const refused = await patch(owner, body);
      expect(refused.status, refused.text).to.equal(400);
      expect(refused.json.code).to.equal('invalid_request');
      expect(refused.json.field).to.equal(field);
      expect(await refused.events()).to.deep.equal([]);
    }
    const notAnObject = await patch(owner, [false]);
    expect(notAnObject.status).to.equal(400);
    expect((await server.request('GET', PATH, { headers: as(owner) })).json.orchestration_alerts).to.equal(true);
  });

  it('honours If-Match: 412 for a version that is not the last', async () => {
    const read = await server.request('GET', PATH, { headers: as(owner) });
    const changed = await patch(owner, { orchestration_alerts: false }, { 'if-match': read.headers.get('etag') as string });
    expect(changed.status, changed.text).to.equal(200);
    const stale = await patch(owner, { orchestration_alerts: true }, { 'if-match': read.headers.get('etag') as string });
    expect(stale.status, stale.text).to.equal(412);
    expect(stale.json.code).to.equal('revision_mismatch');
    expect(await stale.events()).to.deep.equal([]);
    const current = await patch(owner, { orchestration_alerts: true }, { 'if-match': changed.headers.get('etag') as string });
    expect(current.status, current.text).to.equal(200);
    expect(current.json.orchestration_alerts).to.equal(true);
  });

  it('reads and changes them through GraphQL as well', async () => {
    const gql = (account: Account | null, query: string) => server.request('POST', '/graphql', { headers: account ? as(account) : {}, body: { query } });
    const read = await gql(memberAtHome, '{ notification_preferences { orchestration_alerts updated_at } }');
    expect(read.json.data, read.text).to.deep.equal({ notification_preferences: { orchestration_alerts: true, updated_at: null } });
    const off = await gql(memberAtHome, 'mutation { update_notification_preferences(orchestration_alerts: false) { orchestration_alerts } }');
    expect(off.json.data, off.text).to.deep.equal({ update_notification_preferences: { orchestration_alerts: false } });
    expect((await server.request('GET', PATH, { headers: as(memberAtHome) })).json.orchestration_alerts).to.equal(false);
    // Left out: kept.
    const kept = await gql(memberAtHome, 'mutation { update_notification_preferences { orchestration_alerts } }');
    expect(kept.json.data, kept.text).to.deep.equal({ update_notification_preferences: { orchestration_alerts: false } });
    const anonymous = await gql(null, '{ notification_preferences { orchestration_alerts } }');
    expect(anonymous.json.errors?.[0]?.extensions?.code, anonymous.text).to.equal('unauthenticated');
  });

  it('audits every change', async () => {
    const types = await expectEveryEventAudited(server);
    expect([...types]).to.include('NotificationPreferencesChanged');
  });
});
