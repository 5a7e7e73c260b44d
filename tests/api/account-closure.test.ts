// A member closes their own account (POST /api/v1/me/close, or GraphQL's close_account;
// application/user/account-closure.ts) over HTTP: every refusal before anything is written
// (401, 400 naming the field, 403 for a wrong password, 409 for an organization left without an
// owner, for organizations that would be deleted unasked, for a subscription that renews), then
// the closure: the email and name erased in the event log, the organization they were alone in
// deleted, the others left (the invitation that brought them to one erased, and the one they
// never answered), the sessions
// revoked and their IPs and browsers erased, the emails sent to them erased, the email
// answering as unknown at login and free to sign up again.

import { expect } from 'chai';
import { conversationStream } from '../../domain/conversation/conversation';
import { emailStream } from '../../domain/email/email';
import { invitationStream } from '../../domain/invitation/invitation';
import { sessionStream } from '../../domain/session/session';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { userStream } from '../../domain/user/user';
import { EMAILS, type EmailDocument } from '../../projections/emails';
import { SESSIONS } from '../../projections/sessions';
import { TENANTS } from '../../projections/tenants';
import { type Account, LOGIN, PASSWORD, gql, joinAs, registerOwner } from '../support/identity';
import { type TestResponse, type TestServer, startTestServer } from '../support/server';
import { eventually } from '../support/stores';
import { subscribeTo } from '../support/subscriptions';

/** Wrong passwords an account may send in a window before it must wait. */
const WRONG_PASSWORDS = 3;

describe('closing one’s account (POST /api/v1/me/close)', () => {
  let server: TestServer;
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });
  const close = (account: Account | null, body: unknown): Promise<TestResponse> => server.request('POST', '/api/v1/me/close', { headers: account ? as(account) : {}, body });
  const login = (email: string) => gql(server, LOGIN, { email, password: PASSWORD });

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', RATE_LIMIT_PER_EMAIL: String(WRONG_PASSWORDS) });
  });
  after(() => server.close());

  it('refuses without a token (401), a body without the password or with a bad field (400), a wrong password (403), recording nothing', async () => {
    const owner = await registerOwner(server, 'close-refusals');
    expect((await close(null, { password: PASSWORD })).status).to.equal(401);
    for (const [body, field] of [
      [{}, 'password'],
      [{ password: 12 }, 'password'],
      [{ password: PASSWORD, delete_organizations: 'yes' }, 'delete_organizations'],
    ] as const) {
      const refused = await close(owner, body);
      expect([refused.status, refused.json.field], JSON.stringify(body)).to.deep.equal([400, field]);
      expect(await refused.events()).to.deep.equal([]);
    }
    const wrong = await close(owner, { password: 'not the password at all', delete_organizations: true });
    expect([wrong.status, wrong.json.code, wrong.json.field]).to.deep.equal([403, 'invalid_password', 'password']);
    expect(await wrong.events()).to.deep.equal([]);
    // A token cannot be used to guess the password: past the budget even the right one waits.
    for (let attempt = 1; attempt < WRONG_PASSWORDS; attempt += 1) expect((await close(owner, { password: `guess number ${attempt}` })).status).to.equal(403);
    const limited = await close(owner, { password: PASSWORD, delete_organizations: true });
    expect([limited.status, limited.json.code]).to.deep.equal([429, 'rate_limited']);
    expect(limited.headers.get('retry-after')).to.match(/^[0-9]+$/);
    expect(await limited.events()).to.deep.equal([]);
  });

  it('refuses to leave an organization without an owner (409 last_owner), and to delete one unasked (409 organizations_would_be_deleted) or one whose subscription renews (409 subscription_active)', async () => {
    const owner = await registerOwner(server, 'close-last-owner');
    await joinAs(server, await registerOwner(server, 'close-colleague'), owner.tenant_id, 'admin');
    const lastOwner = await close(owner, { password: PASSWORD, delete_organizations: true });
    expect([lastOwner.status, lastOwner.json.code]).to.deep.equal([409, 'last_owner']);
    expect(lastOwner.json.message).to.include('Org close-last-owner');
    expect(await lastOwner.events()).to.deep.equal([]);

    const alone = await registerOwner(server, 'close-alone');
    const unasked = await close(alone, { password: PASSWORD });
    expect([unasked.status, unasked.json.code]).to.deep.equal([409, 'organizations_would_be_deleted']);
    expect(unasked.json.message).to.include('Org close-alone');
    await subscribeTo(server, alone.tenant_id, 'growth');
    const renewing = await close(alone, { password: PASSWORD, delete_organizations: true });
    expect([renewing.status, renewing.json.code]).to.deep.equal([409, 'subscription_active']);
    expect(await renewing.events()).to.deep.equal([]);
    const canceled = await server.request('POST', '/api/v1/billing/cancel', { headers: as(alone), body: {} });
    expect(canceled.status, canceled.text).to.equal(200);
    expect((await close(alone, { password: PASSWORD, delete_organizations: true })).status).to.equal(200);
  });

  it('closes it: email and name erased, the organization they were alone in deleted, the others left, sessions revoked, the email free again', async () => {
    const alice = await registerOwner(server, 'close-alice', 'alice.closing@example.com');
    const bob = await registerOwner(server, 'close-bob');
    const aliceAtBob = await joinAs(server, alice, bob.tenant_id, 'member');
    // She joined a third organization by its invitation: its email was hers.
    const carol = await registerOwner(server, 'close-carol');
    const invited = await server.request('POST', '/api/v1/team/invite', { headers: as(carol), body: { email: 'alice.closing@example.com', role: 'member' } });
    expect(invited.status, invited.text).to.equal(201);
    const [invitationEmail] = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 1 });
    const invitationToken = /invitation token is ([A-Za-z0-9_-]+)/.exec(server.platform.secrets.open((invitationEmail.data as { body_sealed: string }).body_sealed))![1];
    const joined = await server.request('POST', '/api/v1/team/accept-invite', { headers: as(alice), body: { token: invitationToken } });
    expect(joined.status, joined.text).to.equal(200);
    // A fourth organization invited her too (her address written otherwise), and someone else: she never answered.
    const dave = await registerOwner(server, 'close-dave');
    const unanswered = await server.request('POST', '/api/v1/team/invite', { headers: as(dave), body: { email: ' Alice.Closing@Example.com', role: 'member' } });
    expect(unanswered.status, unanswered.text).to.equal(201);
    const someoneElse = await server.request('POST', '/api/v1/team/invite', { headers: as(dave), body: { email: 'erin.stays@example.com', role: 'member' } });
    expect(someoneElse.status, someoneElse.text).to.equal(201);
    const asked = await server.request('POST', '/api/v1/chat', { headers: as(alice), body: { message: 'What are your opening hours?' } });
    expect(asked.status, asked.text).to.equal(200);
    // Where she logged in from is hers: shown to her, sealed under her key in the log.
    const listed = await server.request('GET', '/api/v1/me/sessions', { headers: as(alice) });
    expect(listed.json.items).to.have.length.greaterThan(0);
    const sessionIds: string[] = listed.json.items.map((session: { jti: string }) => session.jti);
    for (const session of listed.json.items) expect(session.ip).to.be.a('string').and.not.equal(ERASED_PERSONAL_DATA);
    const emailsOfAlice = async () => (await server.platform.readStore.collection<EmailDocument>(EMAILS).find({ where: { data_subject: `user:${alice.user_id}` } })).items;
    const hers = await emailsOfAlice();
    expect(hers.map((email) => [email.kind, email.to])).to.deep.include(['email_verification', 'alice.closing@example.com']);
    const [storedStart] = await server.platform.storedEvents.readStream(sessionStream(sessionIds[0]));
    expect(storedStart.data).to.have.nested.property('ip.personal_data');
    expect(storedStart.data).to.have.nested.property('user_agent.subject', `user:${alice.user_id}`);

    const closed = await close(aliceAtBob, { password: PASSWORD, delete_organizations: true });
    expect(closed.status, closed.text).to.equal(200);
    expect(closed.json.deleted_organizations).to.deep.equal([alice.tenant_id]);
    // The decision first; its effects by this request or by the saga account_closure, whichever comes first.
    expect((await closed.events())[0]).to.equal('UserAccountClosed@user');

    // The email and name are unreadable in the event log; the stored form never held them in clear.
    const [registered] = await server.platform.eventStore.readStream(userStream(alice.user_id));
    expect(registered.data).to.deep.include({ email: ERASED_PERSONAL_DATA, name: ERASED_PERSONAL_DATA });
    expect(JSON.stringify(await server.platform.storedEvents.readStream(userStream(alice.user_id)))).to.not.include('alice.closing@example.com');

    expect((await server.platform.readStore.collection(TENANTS).get(alice.tenant_id))?.status).to.equal('deleted');
    const members = await server.request('GET', '/api/v1/org/members', { headers: as(bob) });
    expect(members.json.items.map((member: { user_id: string }) => member.user_id)).to.not.include(alice.user_id);
    for (const token of [alice, aliceAtBob]) expect((await server.request('GET', '/api/v1/me/sessions', { headers: as(token) })).status).to.equal(401);
    // Her sessions' IP and browser are erased with her key, and her sessions leave the read model.
    for (const id of sessionIds) {
      const [started] = await server.platform.eventStore.readStream(sessionStream(id));
      expect(started.data).to.deep.include({ ip: ERASED_PERSONAL_DATA, user_agent: ERASED_PERSONAL_DATA });
    }
    const sessionsOfAlice = async () => (await server.platform.readStore.collection(SESSIONS).find({ where: { user_id: alice.user_id } })).items;
    await eventually(async () => (await sessionsOfAlice()).length === 0, 5000, 'her sessions leaving the read model');
    // The emails sent to her: the address erased in the log, and gone from the outbox.
    for (const email of hers) {
      const [queued] = await server.platform.eventStore.readStream(emailStream(email.id));
      expect(queued.data).to.deep.include({ to: ERASED_PERSONAL_DATA });
      expect(JSON.stringify(await server.platform.storedEvents.readStream(emailStream(email.id)))).to.not.include('alice.closing@example.com');
    }
    await eventually(async () => (await emailsOfAlice()).length === 0, 5000, 'her emails leaving the outbox');
    // The invitation she accepted is erased: her email unreadable on it, gone from carol's list.
    const [invitationSent] = await server.platform.eventStore.readStream(invitationStream(invited.json.id));
    expect(invitationSent.data).to.deep.include({ email: ERASED_PERSONAL_DATA });
    const carolsInvitations = await server.request('GET', '/api/v1/team/invitations', { headers: as(carol) });
    expect(carolsInvitations.json.items).to.deep.equal([]);
    // The one she never accepted is erased as well, by her, in dave's audit log; erin's stays.
    const [unansweredSent] = await server.platform.eventStore.readStream(invitationStream(unanswered.json.id));
    expect(unansweredSent.data).to.deep.include({ email: ERASED_PERSONAL_DATA });
    const davesInvitations = await server.request('GET', '/api/v1/team/invitations', { headers: as(dave) });
    expect(davesInvitations.json.items.map((invitation: { id: string; email: string }) => [invitation.id, invitation.email])).to.deep.equal([[someoneElse.json.id, 'erin.stays@example.com']]);
    const davesAudit = await server.request('GET', '/api/v1/org/audit-logs?action=InvitationErased', { headers: as(dave) });
    expect(davesAudit.status, davesAudit.text).to.equal(200);
    expect(davesAudit.json.items.map((entry: { actor_kind: string; actor_id: string; resource_id: string }) => [entry.actor_kind, entry.actor_id, entry.resource_id])).to.deep.equal([['user', alice.user_id, unanswered.json.id]]);
    const refused = await login('alice.closing@example.com');
    expect(refused.json.errors?.[0]?.extensions?.code).to.equal('invalid_credentials');
    // Her conversation in the deleted organization stays as the organization's record (deleted with it).
    expect((await server.platform.eventStore.readStream(conversationStream(asked.json.conversation_id))).length).to.be.greaterThan(0);

    const again = await registerOwner(server, 'close-alice-again', 'alice.closing@example.com');
    expect(again.user_id).to.not.equal(alice.user_id);
  });

  it('closes it through GraphQL too (close_account), with the same refusals', async () => {
    const CLOSE = `mutation ($password: String!, $delete: Boolean) { close_account(password: $password, delete_organizations: $delete) { closed_at deleted_organizations } }`;
    const owner = await registerOwner(server, 'close-graphql');
    const unasked = await gql(server, CLOSE, { password: PASSWORD }, owner.token);
    expect(unasked.json.errors?.[0]?.extensions?.code).to.equal('organizations_would_be_deleted');
    const wrong = await gql(server, CLOSE, { password: 'not it at all', delete: true }, owner.token);
    expect(wrong.json.errors?.[0]?.extensions?.code).to.equal('invalid_password');
    const closed = await gql(server, CLOSE, { password: PASSWORD, delete: true }, owner.token);
    expect(closed.json.errors, closed.text).to.equal(undefined);
    expect(closed.json.data.close_account.deleted_organizations).to.deep.equal([owner.tenant_id]);
    expect((await login(owner.email)).json.errors?.[0]?.extensions?.code).to.equal('invalid_credentials');
  });
});
