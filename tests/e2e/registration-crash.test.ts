// A sign-up killed with SIGKILL after each of its writes, then the registration saga's due
// pass over the same data folder: a registration whose user did not exist yet is released
// (the same email and slug sign up again, the abandoned password logs nobody in, no tenant
// of it exists); one whose user existed is completed (tenant, owner membership, default
// workspace, widget token, a verification code that verifies and logs in).

import { expect } from 'chai';
import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { login } from '../../application/session/login';
import { register } from '../../application/registration/register';
import { verifyOtp } from '../../application/user/users';
import { silentLogger } from '../../application/ports/logger';
import { registrationAggregate } from '../../application/registration/register';
import { loadAggregate } from '../../application/command-handling/handle-command';
import { DomainError } from '../../domain/shared/errors';
import { registrationStream } from '../../domain/registration/registration';
import { loadConfig } from '../../infrastructure/config/config';
import { type Platform, createPlatform } from '../../infrastructure/composition-root';
import { EMAILS, type EmailDocument } from '../../projections/emails';
import { MEMBERSHIPS, type MembershipDocument, membershipId } from '../../projections/memberships';
import { TENANTS, type TenantDocument } from '../../projections/tenants';
import { WORKSPACES, type WorkspaceDocument } from '../../projections/workspaces';
import { userContext } from '../support/context';
import { temporaryDirectory } from '../support/files';

/** The writes of one sign-up: registration, email, slug, user, tenant, membership, workspace, widget token, code, email, completion. */
const WRITES = 11;
/** The write that registers the user: from it on, a stopped sign-up is finished rather than released. */
const USER_WRITE = 4;
const PASSWORD = 'first-password-1';
const NEW_PASSWORD = 'second-password-2';

/** Runs the registering fixture until it kills itself after its `killAfter`th write; the registration's id. */
function registerAndDie(dataDir: string, killAfter: number, email: string, slug: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'registering-process.js'), dataDir, String(killAfter), email, slug, PASSWORD], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let registrationId: string | null = null;
    let appends = 0;
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    readline.createInterface({ input: child.stdout }).on('line', (line) => {
      const [word, stream] = line.split(' ');
      if (word !== 'APPEND') return;
      appends += 1;
      if (stream.startsWith('registration-')) registrationId ??= stream.slice('registration-'.length);
    });
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' && registrationId && appends === killAfter) resolve(registrationId);
      else reject(new Error(`the sign-up exited with ${code ?? signal} after ${appends} writes: ${stderr}`));
    });
  });
}

const codeIn = (platform: Platform, email: EmailDocument): string => /\b(\d{6})\b/.exec(platform.secrets.open(email.body_sealed))?.[1] ?? '';

async function rejection(promise: Promise<unknown>): Promise<DomainError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('registration killed at each step (SIGKILL), then the due pass', function () {
  this.timeout(120_000);

  it('releases what a sign-up without its user held, and completes one whose user exists', async () => {
    const dir = temporaryDirectory();
    try {
      const signUps: Array<{ step: number; email: string; slug: string; registrationId: string }> = [];
      for (let step = 1; step <= WRITES; step += 1) {
        const email = `ada.${step}@example.com`;
        const slug = `engines-${step}`;
        signUps.push({ step, email, slug, registrationId: await registerAndDie(dir.path, step, email, slug) });
      }

      const config = loadConfig({ DATA_DIR: dir.path, LOG_LEVEL: 'silent', LEASE_TTL_MS: '1000', SCRYPT_LOG_N: '10' });
      const platform = await createPlatform(config, { logger: silentLogger, sagaRetryPollMs: 0 });
      try {
        await platform.start();
        expect(await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 20_000 })).to.equal(true);
        await platform.sagas.runDue();
        expect(await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 20_000 })).to.equal(true);

        for (const { step, email, slug, registrationId } of signUps) {
          const label = `killed after write ${step}`;
          const { state } = await loadAggregate(platform.identity, registrationAggregate, registrationStream(registrationId));
          if (step < USER_WRITE) {
            expect(state.status, label).to.equal('abandoned');
            if (state.status !== 'abandoned') continue;
            expect(await platform.readStore.collection<TenantDocument>(TENANTS).get(state.tenant_id), `${label}: no tenant`).to.equal(null);
            // The same email and slug sign up again; the abandoned sign-up's password opens nothing.
            const again = await register(platform.identity, { email, password: NEW_PASSWORD, name: 'Ada Lovelace', organization_name: 'Analytical Engines', slug }, userContext());
            expect(again.user_id, label).to.not.equal(state.user_id);
            expect((await rejection(login(platform.identity, email, PASSWORD, null, userContext()))).code, label).to.equal('invalid_credentials');
          } else {
            expect(state.status, label).to.equal('completed');
            if (state.status !== 'completed') continue;
            const membership = await platform.readStore.collection<MembershipDocument>(MEMBERSHIPS).get(membershipId(state.tenant_id, state.user_id));
            expect(membership, label).to.deep.include({ role: 'owner', status: 'active' });
            expect(await platform.readStore.collection<WorkspaceDocument>(WORKSPACES).get(state.workspace_id), label).to.deep.include({ tenant_id: state.tenant_id, is_default: true });
            expect((await platform.readStore.collection<TenantDocument>(TENANTS).get(state.tenant_id))?.widget_token_hash, label).to.be.a('string');
            // The latest verification code verifies the email and logs the owner in.
            const sent = await platform.readStore.collection<EmailDocument>(EMAILS).find({ where: { to: email }, sort: { field: 'queued_at', direction: 'desc' }, limit: 1 });
            expect(sent.items, label).to.have.length(1);
            const session = await verifyOtp(platform.identity, email, codeIn(platform, sent.items[0]), userContext());
            expect(session.role, label).to.equal('owner');
            expect((await login(platform.identity, email, PASSWORD, null, userContext())).tenant.id, label).to.equal(state.tenant_id);
            // The email is the completed account's now.
            const taken = await rejection(register(platform.identity, { email, password: NEW_PASSWORD, name: 'Ada Lovelace', organization_name: 'Other Engines', slug: `other-${step}` }, userContext()));
            expect(taken.code, label).to.equal('email_taken');
          }
        }
        // Nothing is left pending.
        expect(await platform.projections.waitFor(await platform.eventStore.headPosition(), { timeoutMs: 20_000 })).to.equal(true);
        const pending = await platform.readStore.collection('registrations').find({ where: { status: 'pending' } });
        expect(pending.items.map((doc) => doc.id)).to.deep.equal([]);
      } finally {
        await platform.close();
      }
    } finally {
      dir.remove();
    }
  });
});
