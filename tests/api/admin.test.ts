import { expect } from 'chai';
import { bootstrapSuperAdmin } from '../../application/admin/admin-auth';
import { type Account, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

const ADMIN = { email: 'root@platform.test', password: 'root password 123' };

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
      expect((await server.request('GET', '/api/v1/admin/emails/nope', { headers: auth })).status).to.equal(404);
      expect((await server.request('GET', '/api/v1/admin/emails?status=lost', { headers: auth })).json.field).to.equal('status');
    });
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
