import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { bootstrapSuperAdmin } from '../../application/admin/admin-auth';
import { redactOneTimeCodes } from '../../application/admin/outbox';
import { unsubscribeUrl } from '../../application/notification/unsubscribe-links';
import type { RecordedEvent } from '../../application/ports/event-store';
import { AesGcmSecrets } from '../../infrastructure/crypto/secrets';
import { AUDIT_LOG, type AuditLogEntry } from '../../projections/audit-log';
import { type Account, lastEmailedCode, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';
import { type TestSmtpServer, startSmtpServer } from '../support/smtp';
import { eventually } from '../support/stores';

const ADMIN = { email: 'root@platform.test', password: 'root password 123' };
const CLI = path.join(__dirname, '..', '..', 'adapters', 'cli', 'main.js');

async function adminLogin(server: TestServer): Promise<{ token: string; id: string }> {
  const response = await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN });
  return { token: response.json.token, id: response.json.admin.id };
}

/** The one email to `to`, listed and then read through the admin API. */
async function readEmailTo(server: TestServer, token: string, to: string, kind: string) {
  const auth = { authorization: `Bearer ${token}` };
  const listed = await server.request('GET', `/api/v1/admin/emails?to=${encodeURIComponent(to)}`, { headers: auth });
  const email = listed.json.items.find((item: { kind: string }) => item.kind === kind);
  return server.request('GET', `/api/v1/admin/emails/${email.id}`, { headers: auth });
}

async function bodyReads(server: TestServer, emailId: string): Promise<RecordedEvent[]> {
  return (await server.platform.eventStore.readStream(`email-${emailId}`)).filter((event) => event.type === 'EmailBodyRead');
}

describe('super admin (/api/v1/admin)', () => {
  let server: TestServer;
  let owner: Account;
  let adminToken: string;

  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password });
    owner = await registerOwner(server, 'tenant-of-admin-test');
  });
  after(() => server.close());

  describe('POST /auth/login', () => {
    it('logs the bootstrapped admin in with an admin token', async () => {
      const response = await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN });
      expect(response.status).to.equal(200);
      expect(response.json.admin.email).to.equal(ADMIN.email);
      adminToken = response.json.token;
      expect(adminToken).to.match(/^v4\.public\./);
    });

    it('answers 401 for a wrong password or an unknown email, 400 per missing field', async () => {
      expect((await server.request('POST', '/api/v1/admin/auth/login', { body: { ...ADMIN, password: 'wrong password!!' } })).status).to.equal(401);
      expect((await server.request('POST', '/api/v1/admin/auth/login', { body: { email: owner.email, password: 'correct horse battery' } })).status).to.equal(401);
      const missing = await server.request('POST', '/api/v1/admin/auth/login', { body: { email: ADMIN.email } });
      expect(missing.status).to.equal(400);
      expect(missing.json.field).to.equal('password');
    });

    it('takes a changed SUPER_ADMIN_PASSWORD on the next bootstrap', async () => {
      await bootstrapSuperAdmin(server.platform.identity, ADMIN.email, 'a brand new password');
      expect((await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN })).status).to.equal(401);
      expect((await server.request('POST', '/api/v1/admin/auth/login', { body: { email: ADMIN.email, password: 'a brand new password' } })).status).to.equal(200);
      await bootstrapSuperAdmin(server.platform.identity, ADMIN.email, ADMIN.password);
    });
  });

  describe('token audiences', () => {
    it('refuses a tenant token on admin routes and an admin token on tenant routes', async () => {
      const tenantOnAdmin = await server.request('GET', '/api/v1/admin/emails', { headers: { authorization: `Bearer ${owner.token}` } });
      expect(tenantOnAdmin.status).to.equal(401);
      const adminOnOrg = await server.request('GET', '/api/v1/org/members', { headers: { authorization: `Bearer ${adminToken}` } });
      expect(adminOnOrg.status).to.equal(401);
      expect((await server.request('GET', '/api/v1/me/sessions', { headers: { authorization: `Bearer ${adminToken}` } })).status).to.equal(401);
      expect((await server.request('GET', '/api/v1/admin/emails')).status).to.equal(401);
    });
  });

  describe('GET /emails', () => {
    it('lists the outbox without bodies and shows one email with its body', async () => {
      const auth = { authorization: `Bearer ${adminToken}` };
      const listed = await server.request('GET', `/api/v1/admin/emails?to=${encodeURIComponent(owner.email)}`, { headers: auth });
      expect(listed.status).to.equal(200);
      expect(listed.json.items).to.have.length(1);
      expect(listed.json.items[0]).to.deep.include({ to: owner.email, subject: 'Verify your email', kind: 'email_verification' });
      expect(listed.json.items[0]).to.not.have.any.keys('text', 'body_sealed');
      expect(listed.text).to.not.match(/code is \d{6}/);
      const one = await server.request('GET', `/api/v1/admin/emails/${listed.json.items[0].id}`, { headers: auth });
      expect(one.json.text).to.match(/Your verification code is \d{6}/);
      expect(one.json.codes_shown).to.equal(true);
      expect((await server.request('GET', '/api/v1/admin/emails/nope', { headers: auth })).status).to.equal(404);
      expect((await server.request('GET', '/api/v1/admin/emails?status=lost', { headers: auth })).json.field).to.equal('status');
    });
  });
});

describe('reading an email body through the super admin API', () => {
  describe('with the embedded outbox as the mailer (log mailer)', () => {
    let server: TestServer;
    let owner: Account;
    let admin: { token: string; id: string };
    before(async () => {
      server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password });
      owner = await registerOwner(server, 'audited-read');
      admin = await adminLogin(server);
    });
    after(() => server.close());

    it('shows the code and records EmailBodyRead, the admin as actor, in the email’s tenant and its audit log', async () => {
      const one = await readEmailTo(server, admin.token, owner.email, 'email_verification');
      expect(one.status).to.equal(200);
      expect(one.json).to.deep.include({ codes_shown: true, tenant_id: owner.tenant_id });
      expect(one.json.text).to.match(/Your verification code is \d{6}\./);
      const [read] = await bodyReads(server, one.json.id);
      expect(read.data).to.deep.include({ email_id: one.json.id, admin_id: admin.id, codes_shown: true });
      expect(read.metadata).to.deep.include({ tenant_id: owner.tenant_id, actor: { kind: 'admin', id: admin.id } });
      expect(read.metadata.request_id).to.be.a('string');
      await server.platform.readYourWrites(read.position);
      const audit = await server.platform.readStore.collection<AuditLogEntry>(AUDIT_LOG).find({ where: { tenant_id: owner.tenant_id, action: 'EmailBodyRead' } });
      expect(audit.items.map((entry) => [entry.actor_kind, entry.actor_id, entry.resource_type, entry.resource_id])).to.deep.equal([['admin', admin.id, 'email', one.json.id]]);
    });

    it('lists what the log mailer took as kept in the outbox, never as sent (#9.7)', async () => {
      const auth = { authorization: `Bearer ${admin.token}` };
      const listing = () => server.request('GET', `/api/v1/admin/emails?to=${encodeURIComponent(owner.email)}`, { headers: auth });
      await eventually(async () => (await listing()).json.items[0]?.status === 'kept', 5000, 'the email kept');
      const [email] = (await listing()).json.items;
      expect(email).to.deep.include({ status: 'kept', provider: 'log', sent_at: null });
      expect((await server.request('GET', '/api/v1/admin/emails?status=sent', { headers: auth })).json.items).to.deep.equal([]);
      const sent = await server.platform.eventStore.readAll({ filter: { kind: 'event_type', types: ['EmailSent'] } });
      expect(sent).to.deep.equal([]);
    });

    it('records every read, and none for a listing or an unknown email', async () => {
      const auth = { authorization: `Bearer ${admin.token}` };
      const listed = await server.request('GET', `/api/v1/admin/emails?to=${encodeURIComponent(owner.email)}`, { headers: auth });
      const id = listed.json.items[0].id;
      const before = (await bodyReads(server, id)).length;
      await server.request('GET', `/api/v1/admin/emails/${id}`, { headers: auth });
      await server.request('GET', `/api/v1/admin/emails/${id}`, { headers: auth });
      const reads = await bodyReads(server, id);
      expect(reads).to.have.length(before + 2);
      // The outbox's own view of the email is untouched by reads.
      await server.platform.readYourWrites(reads[reads.length - 1].position);
      const after = await server.request('GET', `/api/v1/admin/emails?to=${encodeURIComponent(owner.email)}`, { headers: auth });
      expect(after.json.items[0]).to.deep.include({ id, last_error: null });
      expect(after.json.items[0].status).to.be.oneOf(['queued', 'sending', 'kept']);
      expect((await server.request('GET', '/api/v1/admin/emails/no-such-email', { headers: auth })).status).to.equal(404);
      expect(await server.platform.eventStore.readStream('email-no-such-email')).to.deep.equal([]);
    });

    it('shows the read to operators in `events tail`', async function () {
      this.timeout(30_000);
      const one = await readEmailTo(server, admin.token, owner.email, 'email_verification');
      const reads = await bodyReads(server, one.json.id);
      const last = reads[reads.length - 1];
      const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'events', 'tail', '--from', String(last.position - 1), '--limit', '1'], {
        env: { ...process.env, DATA_DIR: server.platform.config.dataDir, LOG_LEVEL: 'silent' },
      });
      const line = JSON.parse(stdout.trim());
      expect(line).to.deep.include({ type: 'EmailBodyRead', stream: `email-${one.json.id}` });
      expect(line.metadata.actor).to.deep.equal({ kind: 'admin', id: admin.id });
    });
  });

  describe('with SMTP configured', () => {
    let smtp: TestSmtpServer;
    let server: TestServer;
    let owner: Account;
    let admin: { token: string; id: string };
    before(async () => {
      smtp = await startSmtpServer();
      server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password, SMTP_URL: smtp.url }, { sagaRetryPollMs: 20 });
      owner = await registerOwner(server, 'smtp-audited');
      admin = await adminLogin(server);
    });
    after(async () => {
      await server.close();
      await smtp.close();
    });

    it('redacts the verification code, and records that it did', async () => {
      const one = await readEmailTo(server, admin.token, owner.email, 'email_verification');
      expect(one.status).to.equal(200);
      expect(one.json.codes_shown).to.equal(false);
      expect(one.json.text).to.match(/^Your verification code is \[redacted\]\. It expires in 10 minutes\.$/);
      expect(one.text).to.not.contain(await lastEmailedCode(server, owner.email));
      const [read] = await bodyReads(server, one.json.id);
      expect(read.data).to.deep.include({ admin_id: admin.id, codes_shown: false });
      // The recipient still got the code by email.
      await eventually(() => smtp.received.some((mail) => mail.to.includes(owner.email)), 10_000, 'the email');
      expect(smtp.received.find((mail) => mail.to.includes(owner.email))!.raw).to.match(/verification code is \d{6}/);
    });

    it('redacts an invitation token, keeping the rest of the text', async () => {
      const invited = await server.request('POST', '/api/v1/team/invite', { headers: { authorization: `Bearer ${owner.token}` }, body: { email: 'guest@example.com', role: 'member' } });
      expect(invited.status).to.equal(201);
      const one = await readEmailTo(server, admin.token, 'guest@example.com', 'invitation');
      expect(one.json.text).to.match(/^Owner invited you to join Org smtp-audited as a member\. Your invitation token is \[redacted\]\. It expires in 7 days\.$/);
    });
  });

  it('redacts numeric codes and tokens but not words, years or short numbers', () => {
    expect(redactOneTimeCodes('code 123456, token AbC_d-9xYz012345678901234, year 2026, internationalization, 10 minutes')).to.equal(
      'code [redacted], token [redacted], year 2026, internationalization, 10 minutes',
    );
    // An alert email's unsubscribe link: whoever holds it turns the person's alerts off.
    const link = unsubscribeUrl(new AesGcmSecrets(randomBytes(32)), 'https://svc.example.test', { tenant_id: randomUUID(), user_id: randomUUID(), kind: 'orchestration_alerts' })!;
    expect(redactOneTimeCodes(`Turn them off for yourself: ${link} (or PATCH`)).to.equal(
      'Turn them off for yourself: https://svc.example.test/notifications/unsubscribe?token=[redacted].[redacted] (or PATCH',
    );
  });
});

describe('super admin login rate limit', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ SCRYPT_LOG_N: '12', SUPER_ADMIN_EMAIL: ADMIN.email, SUPER_ADMIN_PASSWORD: ADMIN.password, RATE_LIMIT_PER_EMAIL: '2' });
  });
  after(() => server.close());

  it('answers 429 with Retry-After past the budget', async () => {
    await server.request('POST', '/api/v1/admin/auth/login', { body: { ...ADMIN, password: 'wrong one 1234' } });
    await server.request('POST', '/api/v1/admin/auth/login', { body: { ...ADMIN, password: 'wrong one 1234' } });
    const limited = await server.request('POST', '/api/v1/admin/auth/login', { body: ADMIN });
    expect(limited.status).to.equal(429);
    expect(limited.json.code).to.equal('rate_limited');
    expect(Number(limited.headers.get('retry-after'))).to.be.greaterThan(0);
  });
});
