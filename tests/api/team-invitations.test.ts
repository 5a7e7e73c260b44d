import { expect } from 'chai';
import { INVITATION_TTL_SECONDS, invitationStream } from '../../domain/invitation/invitation';
import { ERASED_PERSONAL_DATA } from '../../domain/shared/events';
import { EMAILS, type EmailDocument } from '../../projections/emails';
import { USERS } from '../../projections/users';
import { type Account, LOGIN, PASSWORD, gql, joinAs, registerOwner, liftSeatLimit, widgetTokenOf } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { ManualClock, eventually } from '../support/stores';

const NEW_PASSWORD = 'a brand new passphrase';

describe('team invitations and memberships (/api/v1/team, spec 4.10)', () => {
  let server: TestServer;
  let clock: ManualClock;
  let owner: Account;
  let admin: Account;
  let member: Account;
  let outsider: Account;

  const as = (account: Account | string) => ({ authorization: `Bearer ${typeof account === 'string' ? account : account.token}` });

  /** The token of the last invitation emailed to `email`, opened from the sealed outbox body. */
  async function lastInvitationToken(email: string): Promise<string> {
    const queued = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 500 });
    const mine = queued.find((event) => {
      const data = event.data as { to: string; kind: string };
      return data.to === email.toLowerCase() && data.kind === 'invitation';
    });
    if (!mine) throw new Error(`no invitation emailed to ${email}`);
    const text = server.platform.secrets.open((mine.data as { body_sealed: string }).body_sealed);
    return /invitation token is ([A-Za-z0-9_-]+)/.exec(text)![1];
  }

  /** The clock stands still unless moved: lists sorted by time need distinct instants. */
  const tick = (): void => clock.advance(1000);

  async function registerOwnerThenTick(slug: string, email: string): Promise<Account> {
    const account = await registerOwner(server, slug, email);
    tick();
    return account;
  }

  async function invite(by: Account, email: string, role: 'admin' | 'member' = 'member'): Promise<{ id: string; token: string }> {
    tick();
    const response = await server.request('POST', '/api/v1/team/invite', { headers: as(by), body: { email, role } });
    if (response.status !== 201) throw new Error(`invite ${email}: ${response.status} ${response.text}`);
    return { id: response.json.id, token: await lastInvitationToken(email) };
  }

  const accept = (body: Record<string, unknown>, headers: Record<string, string> = {}) => server.request('POST', '/api/v1/team/accept-invite', { headers, body });

  before(async () => {
    clock = new ManualClock(new Date());
    server = await startTestServer({ SCRYPT_LOG_N: '12', TOKEN_TTL_SECONDS: String(30 * 24 * 3600) }, { clock });
    owner = await registerOwner(server, 'orbit');
    await liftSeatLimit(server, owner.tenant_id);
    admin = await joinAs(server, await registerOwnerThenTick('adm-home', 'adm@example.com'), owner.tenant_id, 'admin');
    tick();
    member = await joinAs(server, await registerOwnerThenTick('mem-home', 'mem@example.com'), owner.tenant_id, 'member');
    tick();
    outsider = await registerOwner(server, 'other-org');
    await liftSeatLimit(server, outsider.tenant_id);
  });
  after(() => server.close());

  describe('authentication and roles', () => {
    const userRoutes: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/team/members'],
      ['DELETE', '/api/v1/team/members/someone'],
      ['POST', '/api/v1/team/invite', { email: 'x@example.com', role: 'member' }],
      ['GET', '/api/v1/team/invitations'],
      ['POST', '/api/v1/team/invitations/some-id/revoke'],
      ['POST', '/api/v1/team/invitations/some-id/erase'],
      ['POST', '/api/v1/team/switch-tenant', { tenant_id: 'x' }],
      ['GET', '/api/v1/team/my-tenants'],
    ];

    it('answers 401 without a token, with a bad token and with a widget token on every user route', async () => {
      const widgetToken = await widgetTokenOf(server, owner);
      for (const [method, path, body] of userRoutes) {
        const none = await server.request(method, path, { body });
        expect(none.status, `${method} ${path}`).to.equal(401);
        expect(none.json.code).to.equal('unauthenticated');
        const bad = await server.request(method, path, { body, headers: as('v4.public.garbage') });
        expect(bad.status, `${method} ${path}`).to.equal(401);
        expect(bad.json.code).to.equal('invalid_token');
        const widget = await server.request(method, path, { body, headers: as(widgetToken) });
        expect(widget.status, `${method} ${path}`).to.equal(401);
        expect(widget.json.code).to.equal('widget_token_not_allowed');
      }
    });

    it('answers 403 to a member on the admin routes', async () => {
      for (const [method, path, body] of userRoutes.filter(([, path]) => /invite|invitations/.test(path))) {
        const response = await server.request(method, path, { body, headers: as(member) });
        expect(response.status, `${method} ${path}`).to.equal(403);
        expect(response.json.code).to.equal('insufficient_role');
      }
    });
  });

  describe('GET /members', () => {
    it('lists the tenant’s members for any member, like /api/v1/org/members', async () => {
      const team = await server.request('GET', '/api/v1/team/members', { headers: as(member) });
      expect(team.status).to.equal(200);
      expect(team.json.items.map((m: { email: string; role: string }) => [m.email, m.role])).to.deep.equal([
        ['orbit@example.com', 'owner'],
        ['adm@example.com', 'admin'],
        ['mem@example.com', 'member'],
      ]);
      const org = await server.request('GET', '/api/v1/org/members', { headers: as(member) });
      expect(team.json).to.deep.equal(org.json);
      const page = await server.request('GET', '/api/v1/team/members?limit=2&role=owner', { headers: as(member) });
      expect(page.json.items.map((m: { email: string }) => m.email)).to.deep.equal(['orbit@example.com']);
      expect((await server.request('GET', '/api/v1/team/members?status=asleep', { headers: as(member) })).json).to.deep.include({ code: 'invalid_request', field: 'status' });
    });
  });

  describe('DELETE /members/{id}', () => {
    it('lets an admin remove a member, a member leave, and refuses the rest', async () => {
      const removable = await joinAs(server, await registerOwner(server, 'rem-home', 'rem@example.com'), owner.tenant_id, 'member');
      const leaver = await joinAs(server, await registerOwner(server, 'leave-home', 'leave@example.com'), owner.tenant_id, 'member');

      const byMember = await server.request('DELETE', `/api/v1/team/members/${removable.user_id}`, { headers: as(member) });
      expect(byMember.status).to.equal(403);
      expect((await server.request('DELETE', `/api/v1/team/members/${owner.user_id}`, { headers: as(admin) })).json.code).to.equal('owner_protected');
      const lastOwner = await server.request('DELETE', `/api/v1/team/members/${owner.user_id}`, { headers: as(owner) });
      expect(lastOwner.status).to.equal(409);
      expect(lastOwner.json.code).to.equal('last_owner');
      const foreign = await server.request('DELETE', `/api/v1/team/members/${outsider.user_id}`, { headers: as(admin) });
      expect(foreign.status).to.equal(404);
      expect(foreign.json.code).to.equal('member_not_found');

      expect((await server.request('DELETE', `/api/v1/team/members/${removable.user_id}`, { headers: as(admin) })).status).to.equal(204);
      expect((await server.request('DELETE', `/api/v1/team/members/${leaver.user_id}`, { headers: as(leaver) })).status).to.equal(204);
      const listed = await server.request('GET', '/api/v1/team/members', { headers: as(owner) });
      expect(listed.json.items.map((m: { email: string }) => m.email)).to.not.include.members(['rem@example.com', 'leave@example.com']);
      expect((await server.request('GET', '/api/v1/team/members', { headers: as(leaver) })).status).to.equal(401);
    });
  });

  describe('POST /invite', () => {
    it('creates a pending invitation, emails the token, and keeps the token out of responses and events', async () => {
      const response = await server.request('POST', '/api/v1/team/invite', { headers: as(admin), body: { email: ' Newbie@Example.com ', role: 'admin' } });
      expect(response.status).to.equal(201);
      expect(response.json).to.deep.include({ email: 'newbie@example.com', role: 'admin', status: 'pending', invited_by: admin.user_id });
      expect(response.json.id).to.be.a('string');
      expect(Date.parse(response.json.expires_at) - clock.now().getTime()).to.equal(INVITATION_TTL_SECONDS * 1000);
      const token = await lastInvitationToken('newbie@example.com');
      expect(token.length).to.be.greaterThan(30);
      expect(response.text).to.not.include(token);

      const events = await server.platform.eventStore.readAll({ maxCount: 100_000 });
      expect(JSON.stringify(events)).to.not.include(token);
      const sent = events.find((event) => event.type === 'InvitationSent' && (event.data as { invitation_id: string }).invitation_id === response.json.id)!;
      expect(sent.stream).to.equal(`invitation-${response.json.id}`);
      expect(sent.data).to.deep.include({ tenant_id: owner.tenant_id, email: 'newbie@example.com', role: 'admin', invited_by: admin.user_id, token_digest: server.platform.secrets.digest(token) });
      expect(sent.metadata).to.deep.include({ tenant_id: owner.tenant_id, actor: { kind: 'user', id: admin.user_id } });

      // Read-your-writes: the list shows it at once.
      const listed = await server.request('GET', '/api/v1/team/invitations', { headers: as(admin) });
      expect(listed.json.items.map((i: { id: string }) => i.id)).to.include(response.json.id);
      expect(JSON.stringify(listed.json)).to.not.include(token);
    });

    it('answers 400 naming each invalid field', async () => {
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{ role: 'member' }, 'invalid_request', 'email'],
        [{ email: 42, role: 'member' }, 'invalid_request', 'email'],
        [{ email: 'not-an-email', role: 'member' }, 'invalid_email', 'email'],
        [{ email: '<script>alert(1)</script>@x.io', role: 'member' }, 'invalid_email', 'email'],
        [{ email: 'ok@exa mple.com', role: 'member' }, 'invalid_email', 'email'],
        [{ email: 'ok@example.com' }, 'invalid_request', 'role'],
        [{ email: 'ok@example.com', role: 'owner' }, 'invalid_request', 'role'],
        [{ email: 'ok@example.com', role: 'emperor' }, 'invalid_request', 'role'],
      ];
      for (const [body, code, field] of cases) {
        const response = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body });
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json, JSON.stringify(body)).to.deep.include({ code, field });
      }
      const none = await server.request('GET', '/api/v1/team/invitations?status=pending', { headers: as(owner) });
      expect(none.json.items.map((i: { email: string }) => i.email)).to.not.include('ok@example.com');
    });

    it('answers 409 already_member for a member’s email and invitation_pending for a second invitation', async () => {
      const member409 = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'MEM@example.com', role: 'member' } });
      expect(member409.status).to.equal(409);
      expect(member409.json.code).to.equal('already_member');
      await invite(owner, 'twice@example.com');
      const pending = await server.request('POST', '/api/v1/team/invite', { headers: as(admin), body: { email: 'Twice@Example.com', role: 'admin' } });
      expect(pending.status).to.equal(409);
      expect(pending.json.code).to.equal('invitation_pending');
      // Another tenant may invite the same email.
      expect((await server.request('POST', '/api/v1/team/invite', { headers: as(outsider), body: { email: 'twice@example.com', role: 'member' } })).status).to.equal(201);
    });

    it('keeps one pending invitation per email when 20 invitations race (#9.2)', async () => {
      tick();
      const email = 'raced@example.com';
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email, role: 'member' } })),
      );
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 201), statuses.join(',')).to.have.length(1);
      expect(statuses.filter((status) => status === 409)).to.have.length(19);
      for (const refused of responses.filter((response) => response.status === 409)) expect(refused.json.code).to.equal('invitation_pending');
      const listed = await server.request('GET', '/api/v1/team/invitations?status=pending&limit=100', { headers: as(owner) });
      expect(listed.json.items.filter((i: { email: string }) => i.email === email)).to.have.length(1);
      const sent = await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['InvitationSent'] }, maxCount: 500 });
      expect(sent.filter((event) => (event.data as { email: string }).email === email)).to.have.length(1);
    });
  });

  describe('GET /invitations', () => {
    it('lists the tenant’s invitations newest first, filters by status and pages', async () => {
      await invite(owner, 'list-a@example.com');
      await invite(owner, 'list-b@example.com', 'admin');
      const all = await server.request('GET', '/api/v1/team/invitations', { headers: as(owner) });
      expect(all.status).to.equal(200);
      expect(all.json.items[0]).to.deep.include({ email: 'list-b@example.com', role: 'admin', status: 'pending' });
      expect(all.json.items[1]).to.deep.include({ email: 'list-a@example.com', role: 'member', status: 'pending' });

      const first = await server.request('GET', '/api/v1/team/invitations?status=pending&limit=1', { headers: as(owner) });
      expect(first.json.items.map((i: { email: string }) => i.email)).to.deep.equal(['list-b@example.com']);
      const second = await server.request('GET', `/api/v1/team/invitations?status=pending&limit=1&cursor=${first.json.next_cursor}`, { headers: as(owner) });
      expect(second.status).to.equal(200);
      expect(second.json.items.map((i: { email: string }) => i.email)).to.deep.equal(['list-a@example.com']);
      const unfiltered = await server.request('GET', '/api/v1/team/invitations?limit=1', { headers: as(owner) });
      const next = await server.request('GET', `/api/v1/team/invitations?limit=1&cursor=${unfiltered.json.next_cursor}`, { headers: as(owner) });
      expect(next.json.items.map((i: { email: string }) => i.email)).to.deep.equal(['list-a@example.com']);

      expect((await server.request('GET', '/api/v1/team/invitations?status=accepted', { headers: as(owner) })).json.items.map((i: { email: string }) => i.email)).to.not.include('list-a@example.com');
      expect((await server.request('GET', '/api/v1/team/invitations?status=later', { headers: as(owner) })).json).to.deep.include({ code: 'invalid_request', field: 'status' });
      expect((await server.request('GET', '/api/v1/team/invitations?status=pending&cursor=junk', { headers: as(owner) })).status).to.equal(400);
      expect((await server.request('GET', '/api/v1/team/invitations?limit=0', { headers: as(owner) })).json.field).to.equal('limit');
    });

    it('never shows another tenant’s invitations', async () => {
      const theirs = await invite(outsider, 'theirs@example.com');
      const mine = await server.request('GET', '/api/v1/team/invitations?limit=1000', { headers: as(owner) });
      expect(mine.json.items.map((i: { id: string }) => i.id)).to.not.include(theirs.id);
      expect(mine.json.items.map((i: { email: string }) => i.email)).to.not.include('theirs@example.com');
      const their = await server.request('GET', '/api/v1/team/invitations', { headers: as(outsider) });
      expect(their.json.items.map((i: { id: string }) => i.id)).to.include(theirs.id);
    });
  });

  describe('POST /invitations/{id}/revoke', () => {
    it('revokes a pending invitation, frees its email, and the token stops working', async () => {
      const invitation = await invite(owner, 'revoke-me@example.com');
      const revoked = await server.request('POST', `/api/v1/team/invitations/${invitation.id}/revoke`, { headers: as(admin) });
      expect(revoked.status).to.equal(200);
      expect(revoked.json).to.deep.include({ id: invitation.id, email: 'revoke-me@example.com', status: 'revoked' });
      expect(revoked.json.revoked_at).to.be.a('string');
      const again = await server.request('POST', `/api/v1/team/invitations/${invitation.id}/revoke`, { headers: as(admin) });
      expect(again.status).to.equal(409);
      expect(again.json.code).to.equal('invitation_not_pending');
      const used = await accept({ token: invitation.token, name: 'Rev', password: NEW_PASSWORD });
      expect(used.status).to.equal(409);
      expect(used.json.code).to.equal('invitation_revoked');
      expect((await server.request('GET', `/api/v1/team/invite-preview?token=${invitation.token}`)).status).to.equal(409);
      const listed = await server.request('GET', '/api/v1/team/invitations?status=revoked', { headers: as(owner) });
      expect(listed.json.items.map((i: { id: string }) => i.id)).to.include(invitation.id);
      // The email is free for a new invitation.
      expect((await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'revoke-me@example.com', role: 'member' } })).status).to.equal(201);
    });

    it('answers 404 for an unknown invitation and for another tenant’s, which stays pending', async () => {
      const unknown = await server.request('POST', '/api/v1/team/invitations/no-such-id/revoke', { headers: as(owner) });
      expect(unknown.status).to.equal(404);
      expect(unknown.json.code).to.equal('invitation_not_found');
      const theirs = await invite(outsider, 'foreign-revoke@example.com');
      const foreign = await server.request('POST', `/api/v1/team/invitations/${theirs.id}/revoke`, { headers: as(owner) });
      expect(foreign.status).to.equal(404);
      expect(foreign.json.code).to.equal('invitation_not_found');
      const their = await server.request('GET', '/api/v1/team/invitations?status=pending', { headers: as(outsider) });
      expect(their.json.items.map((i: { id: string }) => i.id)).to.include(theirs.id);
    });
  });

  describe('POST /invitations/{id}/erase', () => {
    const erase = (account: Account, id: string) => server.request('POST', `/api/v1/team/invitations/${id}/erase`, { headers: as(account) });
    const emailsTo = async (invitationId: string) => (await server.platform.readStore.collection<EmailDocument>(EMAILS).find({ where: { data_subject: `invitation:${invitationId}` } })).items;

    it('erases a pending invitation: the email unreadable in the log, out of the list and the outbox, the token dead, the email free again', async () => {
      const invitation = await invite(owner, 'Erase-Me@example.com');
      // Sealed from the start: the stored events never held the address in clear.
      const stored = JSON.stringify([
        ...(await server.platform.storedEvents.readStream(invitationStream(invitation.id))),
        ...(await server.platform.storedEvents.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 50 })),
      ]);
      expect(stored).to.not.include('erase-me@example.com');
      await eventually(async () => (await emailsTo(invitation.id)).length === 1, 5000, 'the invitation’s email in the outbox');
      expect((await emailsTo(invitation.id)).map((email) => email.to)).to.deep.equal(['erase-me@example.com']);

      const erased = await erase(admin, invitation.id);
      expect(erased.status, erased.text).to.equal(200);
      expect(erased.json).to.have.all.keys('id', 'erased_at');
      expect(erased.json.id).to.equal(invitation.id);
      const [sent] = await server.platform.eventStore.readStream(invitationStream(invitation.id));
      expect(sent.data).to.deep.include({ email: ERASED_PERSONAL_DATA });
      const invitationEmail = (await server.platform.eventStore.readAll({ direction: 'backwards', filter: { kind: 'event_type', types: ['EmailQueued'] }, maxCount: 50 })).find(
        (event) => (event.data as { data_subject?: string }).data_subject === `invitation:${invitation.id}`,
      )!;
      expect(invitationEmail.data).to.deep.include({ to: ERASED_PERSONAL_DATA });
      await eventually(async () => (await emailsTo(invitation.id)).length === 0, 5000, 'the invitation’s email leaving the outbox');

      const listed = await server.request('GET', '/api/v1/team/invitations?limit=100', { headers: as(owner) });
      expect(listed.json.items.map((i: { id: string }) => i.id)).to.not.include(invitation.id);
      expect((await accept({ token: invitation.token, name: 'Eve', password: NEW_PASSWORD })).status).to.equal(404);
      expect((await server.request('GET', `/api/v1/team/invite-preview?token=${invitation.token}`)).status).to.equal(404);
      const revoke = await server.request('POST', `/api/v1/team/invitations/${invitation.id}/revoke`, { headers: as(owner) });
      expect([revoke.status, revoke.json.code]).to.deep.equal([404, 'invitation_not_found']);
      // Erasing again answers the first erasure.
      tick();
      const again = await erase(owner, invitation.id);
      expect([again.status, again.json]).to.deep.equal([200, erased.json]);
      // The email may be invited again at once.
      expect((await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'erase-me@example.com', role: 'member' } })).status).to.equal(201);
    });

    it('erases an accepted invitation too, leaving the membership it gave', async () => {
      const invitation = await invite(owner, 'erase-accepted@example.com');
      const joined = await accept({ token: invitation.token, name: 'Acc', password: NEW_PASSWORD });
      expect(joined.status, joined.text).to.equal(200);
      const erased = await erase(owner, invitation.id);
      expect(erased.status, erased.text).to.equal(200);
      const members = await server.request('GET', '/api/v1/team/members?limit=100', { headers: as(owner) });
      expect(members.json.items.map((m: { email: string }) => m.email)).to.include('erase-accepted@example.com');
    });

    it('answers 404 for an unknown invitation and another tenant’s (which stays), and 403 to a member', async () => {
      const unknown = await erase(owner, 'no-such-id');
      expect([unknown.status, unknown.json.code]).to.deep.equal([404, 'invitation_not_found']);
      const theirs = await invite(outsider, 'foreign-erase@example.com');
      const foreign = await erase(owner, theirs.id);
      expect([foreign.status, foreign.json.code]).to.deep.equal([404, 'invitation_not_found']);
      const byMember = await erase(member, theirs.id);
      expect([byMember.status, byMember.json.code]).to.deep.equal([403, 'insufficient_role']);
      const [sent] = await server.platform.eventStore.readStream(invitationStream(theirs.id));
      expect(sent.data).to.deep.include({ email: 'foreign-erase@example.com' });
      const their = await server.request('GET', '/api/v1/team/invitations?status=pending', { headers: as(outsider) });
      expect(their.json.items.map((i: { id: string }) => i.id)).to.include(theirs.id);
    });
  });

  describe('GET /invite-preview', () => {
    it('is public and shows the organization, the inviter, the role and the email', async () => {
      const invitation = await invite(owner, 'preview@example.com', 'admin');
      const response = await server.request('GET', `/api/v1/team/invite-preview?token=${invitation.token}`);
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.equal({
        organization_name: 'Org orbit',
        inviter_name: 'Owner',
        role: 'admin',
        email: 'preview@example.com',
        expires_at: new Date(clock.now().getTime() + INVITATION_TTL_SECONDS * 1000).toISOString(),
      });
    });

    it('answers 404 for an unknown token and 400 without one', async () => {
      const unknown = await server.request('GET', '/api/v1/team/invite-preview?token=not-a-real-token');
      expect(unknown.status).to.equal(404);
      expect(unknown.json.code).to.equal('invitation_not_found');
      expect((await server.request('GET', '/api/v1/team/invite-preview')).json).to.deep.include({ code: 'invalid_request', field: 'token' });
      expect((await server.request('GET', '/api/v1/team/invite-preview?token=')).json).to.deep.include({ code: 'invalid_request', field: 'token' });
    });
  });

  describe('POST /accept-invite', () => {
    it('answers 400 naming each invalid field and 404 for an unknown token', async () => {
      const invitation = await invite(owner, 'fields@example.com');
      const cases: Array<[Record<string, unknown>, string, string]> = [
        [{}, 'invalid_request', 'token'],
        [{ token: '' }, 'invalid_request', 'token'],
        [{ token: 7 }, 'invalid_request', 'token'],
        [{ token: invitation.token, password: NEW_PASSWORD }, 'invalid_request', 'name'],
        [{ token: invitation.token, name: 'Fi' }, 'invalid_request', 'password'],
        [{ token: invitation.token, name: ' ', password: NEW_PASSWORD }, 'invalid_name', 'name'],
        [{ token: invitation.token, name: 5, password: NEW_PASSWORD }, 'invalid_request', 'name'],
        [{ token: invitation.token, name: 'Fi', password: 'short' }, 'weak_password', 'password'],
        [{ token: invitation.token, name: 'Fi', password: ['x'] }, 'invalid_request', 'password'],
      ];
      for (const [body, code, field] of cases) {
        const response = await accept(body);
        expect(response.status, JSON.stringify(body)).to.equal(400);
        expect(response.json, JSON.stringify(body)).to.deep.include({ code, field });
      }
      const unknown = await accept({ token: 'never-issued', name: 'Fi', password: NEW_PASSWORD });
      expect(unknown.status).to.equal(404);
      expect(unknown.json.code).to.equal('invitation_not_found');
      // Nothing was created by the refused requests.
      expect((await gql(server, LOGIN, { email: 'fields@example.com', password: NEW_PASSWORD })).json.errors[0].extensions.code).to.equal('invalid_credentials');
    });

    it('creates a verified account for a new email, joins it with the invited role and answers like login', async () => {
      const invitation = await invite(admin, 'Fresh@Example.com', 'admin');
      const response = await accept({ token: invitation.token, name: ' Fresh Person ', password: NEW_PASSWORD });
      expect(response.status).to.equal(200);
      expect(response.json.role).to.equal('admin');
      expect(response.json.user).to.deep.include({ email: 'fresh@example.com', name: 'Fresh Person', email_verified: true });
      expect(response.json.tenant).to.deep.include({ id: owner.tenant_id, slug: 'orbit', name: 'Org orbit' });
      expect(response.json.token).to.match(/^v4\.public\./);
      expect(response.text).to.not.include(invitation.token);

      const tenants = await server.request('GET', '/api/v1/team/my-tenants', { headers: as(response.json.token) });
      expect(tenants.json).to.deep.equal({ items: [{ tenant_id: owner.tenant_id, name: 'Org orbit', slug: 'orbit', role: 'admin', status: 'active' }] });
      const members = await server.request('GET', '/api/v1/team/members', { headers: as(owner) });
      expect(members.json.items.find((m: { email: string }) => m.email === 'fresh@example.com')).to.deep.include({ role: 'admin', user_id: response.json.user.id });
      const listed = await server.request('GET', '/api/v1/team/invitations?status=accepted', { headers: as(owner) });
      expect(listed.json.items.find((i: { id: string }) => i.id === invitation.id)).to.deep.include({ status: 'accepted' });
      // Verified: the password logs in straight away.
      const login = await gql(server, LOGIN, { email: 'fresh@example.com', password: NEW_PASSWORD });
      expect(login.json.data.login.tenant.id).to.equal(owner.tenant_id);

      const reused = await accept({ token: invitation.token, name: 'Fresh Person', password: NEW_PASSWORD });
      expect(reused.status).to.equal(409);
      expect(reused.json.code).to.equal('invitation_already_accepted');
      const reinvite = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'fresh@example.com', role: 'member' } });
      expect(reinvite.status).to.equal(409);
      expect(reinvite.json.code).to.equal('already_member');
      const preview = await server.request('GET', `/api/v1/team/invite-preview?token=${invitation.token}`);
      expect(preview.status).to.equal(409);
    });

    it('lets an existing account accept with its own bearer token from another tenant', async () => {
      const invitation = await invite(owner, outsider.email);
      const response = await accept({ token: invitation.token }, as(outsider));
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.include({ role: 'member' });
      expect(response.json.user.id).to.equal(outsider.user_id);
      expect(response.json.tenant.id).to.equal(owner.tenant_id);
      const mine = await server.request('GET', '/api/v1/team/my-tenants', { headers: as(response.json.token) });
      expect(mine.json.items.map((t: { tenant_id: string; role: string }) => [t.tenant_id, t.role])).to.deep.equal([
        [outsider.tenant_id, 'owner'],
        [owner.tenant_id, 'member'],
      ]);
      // Leave again, so later tests see the outsider as an outsider.
      expect((await server.request('DELETE', `/api/v1/team/members/${outsider.user_id}`, { headers: as(response.json.token) })).status).to.equal(204);
    });

    it('lets an existing account accept with its password, and answers 401 without proof', async () => {
      const existing = await registerOwner(server, 'pw-home', 'pw@example.com');
      const invitation = await invite(owner, 'pw@example.com', 'admin');
      const anonymous = await accept({ token: invitation.token, name: 'Ignored' });
      expect(anonymous.status).to.equal(401);
      expect(anonymous.json.code).to.equal('credentials_required');
      const wrongPassword = await accept({ token: invitation.token, password: 'not the password' });
      expect(wrongPassword.status).to.equal(401);
      expect(wrongPassword.json.code).to.equal('invalid_credentials');
      const someoneElse = await accept({ token: invitation.token }, as(member));
      expect(someoneElse.status).to.equal(401);
      const widget = await accept({ token: invitation.token }, as(await widgetTokenOf(server, owner)));
      expect(widget.status).to.equal(401);
      // None of those used the invitation.
      expect((await server.request('GET', `/api/v1/team/invite-preview?token=${invitation.token}`)).status).to.equal(200);

      const response = await accept({ token: invitation.token, password: PASSWORD });
      expect(response.status).to.equal(200);
      expect(response.json).to.deep.include({ role: 'admin' });
      expect(response.json.user.id).to.equal(existing.user_id);
      expect((await server.request('GET', '/api/v1/team/invitations', { headers: as(response.json.token) })).status).to.equal(200);
    });

    it('creates one user when several accepts race for one email', async () => {
      const invitation = await invite(owner, 'race@example.com');
      const responses = await Promise.all(Array.from({ length: 6 }, () => accept({ token: invitation.token, name: 'Racer', password: NEW_PASSWORD })));
      expect(responses.filter((response) => response.status === 200)).to.have.length(1);
      for (const response of responses.filter((r) => r.status !== 200)) expect(response.status, response.text).to.be.oneOf([401, 409]);
      await server.platform.readYourWrites(await server.platform.eventStore.headPosition());
      expect(await server.platform.readStore.collection(USERS).count({ email: 'race@example.com' })).to.equal(1);
      const registered = (await server.platform.eventStore.readAll({ maxCount: 100_000 })).filter(
        (event) => event.type === 'UserRegistered' && (event.data as { email: string }).email === 'race@example.com',
      );
      expect(registered).to.have.length(1);
    });
  });

  describe('POST /switch-tenant and GET /my-tenants', () => {
    it('lists the caller’s memberships and switches to another one', async () => {
      const mine = await server.request('GET', '/api/v1/team/my-tenants', { headers: as(member) });
      expect(mine.status).to.equal(200);
      expect(mine.json.items).to.deep.equal([
        { tenant_id: mine.json.items[0].tenant_id, name: 'Org mem-home', slug: 'mem-home', role: 'owner', status: 'active' },
        { tenant_id: owner.tenant_id, name: 'Org orbit', slug: 'orbit', role: 'member', status: 'active' },
      ]);
      const home = mine.json.items[0].tenant_id;
      const switched = await server.request('POST', '/api/v1/team/switch-tenant', { headers: as(member), body: { tenant_id: home } });
      expect(switched.status).to.equal(200);
      expect(switched.json).to.deep.include({ role: 'owner' });
      expect(switched.json.tenant).to.deep.include({ id: home, slug: 'mem-home' });
      expect(switched.json.user).to.deep.include({ id: member.user_id, email: 'mem@example.com' });
      const there = await server.request('GET', '/api/v1/team/members', { headers: as(switched.json.token) });
      expect(there.json.items.map((m: { email: string }) => m.email)).to.deep.equal(['mem@example.com']);
      // The old token still works in its own tenant.
      expect((await server.request('GET', '/api/v1/team/members', { headers: as(member) })).json.items).to.have.length.greaterThan(1);
    });

    it('answers 403 not_a_member for a tenant of someone else and 400 without a tenant_id', async () => {
      const refused = await server.request('POST', '/api/v1/team/switch-tenant', { headers: as(member), body: { tenant_id: outsider.tenant_id } });
      expect(refused.status).to.equal(403);
      expect(refused.json.code).to.equal('not_a_member');
      expect((await server.request('POST', '/api/v1/team/switch-tenant', { headers: as(member), body: { tenant_id: 'no-such-tenant' } })).status).to.equal(403);
      expect((await server.request('POST', '/api/v1/team/switch-tenant', { headers: as(member), body: {} })).json).to.deep.include({ code: 'invalid_request', field: 'tenant_id' });
    });
  });

  // Last: moves the clock past every invitation's expiry (tokens live 30 days here).
  describe('expiry', () => {
    it('answers 410 once an invitation has expired, lists it as expired and frees its email', async () => {
      const invitation = await invite(owner, 'late@example.com');
      clock.advance(INVITATION_TTL_SECONDS * 1000 + 1000);
      const preview = await server.request('GET', `/api/v1/team/invite-preview?token=${invitation.token}`);
      expect(preview.status).to.equal(410);
      expect(preview.json.code).to.equal('invitation_expired');
      const accepted = await accept({ token: invitation.token, name: 'Late', password: NEW_PASSWORD });
      expect(accepted.status).to.equal(410);
      expect(accepted.json.code).to.equal('invitation_expired');
      expect((await gql(server, LOGIN, { email: 'late@example.com', password: NEW_PASSWORD })).json.errors[0].extensions.code).to.equal('invalid_credentials');

      const expired = await server.request('GET', '/api/v1/team/invitations?status=expired', { headers: as(owner) });
      expect(expired.json.items.find((i: { id: string }) => i.id === invitation.id)).to.deep.include({ status: 'expired' });
      const pending = await server.request('GET', '/api/v1/team/invitations?status=pending', { headers: as(owner) });
      expect(pending.json.items.map((i: { id: string }) => i.id)).to.not.include(invitation.id);
      const revoke = await server.request('POST', `/api/v1/team/invitations/${invitation.id}/revoke`, { headers: as(owner) });
      expect(revoke.status).to.equal(409);

      const again = await server.request('POST', '/api/v1/team/invite', { headers: as(owner), body: { email: 'late@example.com', role: 'member' } });
      expect(again.status).to.equal(201);
      const fresh = await lastInvitationToken('late@example.com');
      expect(fresh).to.not.equal(invitation.token);
      expect((await accept({ token: fresh, name: 'Late', password: NEW_PASSWORD })).status).to.equal(200);
    });
  });
});
