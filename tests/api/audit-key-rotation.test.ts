// Rotating the token key (README, "Rotating the token key"): the operator prints the public half
// of the key in use and a new key with the CLI, and restarts with the new TOKEN_SECRET_KEY and
// the old public half in TOKEN_PREVIOUS_PUBLIC_KEYS. Over HTTP: tokens of the old key are
// refused, checkpoints it signed still verify, the anchoring goes on after them with the new
// key, and the export lists both keys; without the previous key, verify reports the first old
// checkpoint as not signed by the platform.

import { expect } from 'chai';
import { type AuditCheckpointStatement, auditCheckpointStream } from '../../domain/audit-checkpoint/audit-checkpoint';
import { verifyExportOffline } from '../support/audit-export';
import { cli } from '../support/cli';
import { temporaryDirectory } from '../support/files';
import { LOGIN, PASSWORD, type Account, gql, registerOwner } from '../support/identity';
import { type TestServer, startTestServer } from '../support/server';

const EVERY = 3;

describe('audit checkpoints across a rotation of the token key', function () {
  this.timeout(60_000);
  const dir = temporaryDirectory();
  let server: TestServer | null = null;
  after(async () => {
    await server?.close();
    dir.remove();
  });

  const start = async (env: Record<string, string>): Promise<TestServer> => {
    await server?.close();
    // The anchoring runs when the test says so (runOnce).
    server = await startTestServer({ DATA_DIR: dir.path, SCRYPT_LOG_N: '12', AUDIT_CHECKPOINT_ENTRIES: String(EVERY), ...env }, { auditAnchoringPollMs: 3_600_000 });
    return server;
  };
  const anchored = async (running: TestServer): Promise<void> => {
    await running.platform.auditAnchoring.runOnce();
    await running.platform.readYourWrites(await running.platform.eventStore.headPosition());
  };
  const checkpointsOf = async (running: TestServer, tenantId: string) =>
    (await running.platform.eventStore.readStream(auditCheckpointStream(tenantId))).map((event) => event.data as AuditCheckpointStatement);
  const signIn = async (running: TestServer, account: Account): Promise<Account> => {
    const login = await gql(running, LOGIN, { email: account.email, password: PASSWORD });
    expect(login.json.errors, login.text).to.equal(undefined);
    return { ...account, token: login.json.data.login.token };
  };
  const as = (account: Account) => ({ authorization: `Bearer ${account.token}` });

  it('keeps old checkpoints verifiable and the anchoring going with TOKEN_PREVIOUS_PUBLIC_KEYS; reports them without it', async () => {
    const empty = temporaryDirectory();
    const noKeyYet = await cli(empty.path, 'keys', 'public');
    empty.remove();
    expect([noKeyYet.code, noKeyYet.stdout]).to.deep.equal([1, `no token key yet: TOKEN_SECRET_KEY is unset and ${empty.path} holds no keys.json\n`]);

    // The embedded default: a key generated into DATA_DIR/keys.json.
    let running = await start({});
    const oldKeyId = running.platform.auditSigner.keyId;
    let owner = await registerOwner(running, 'rotation');
    await gql(running, 'mutation { create_workspace(name: "Before") { id } }', {}, owner.token);
    await anchored(running);
    const before = await checkpointsOf(running, owner.tenant_id);
    expect(before.length).to.be.greaterThan(0);
    expect(before.every((checkpoint) => checkpoint.key_id === oldKeyId)).to.equal(true);
    // What the operator notes before rotating: the public half of the key in use.
    const printed = await cli(dir.path, 'keys', 'public');
    expect(printed.code, printed.stderr).to.equal(0);
    const oldPublic = printed.stdout.trim();
    expect(oldPublic).to.match(/^k4\.public\.[A-Za-z0-9_-]{43}$/);

    const generated = await cli(dir.path, 'keys', 'generate');
    expect(generated.code, generated.stderr).to.equal(0);
    const newSecret = /^TOKEN_SECRET_KEY=(k4\.secret\.\S+)$/m.exec(generated.stdout)![1];
    running = await start({ TOKEN_SECRET_KEY: newSecret, TOKEN_PREVIOUS_PUBLIC_KEYS: oldPublic });
    const newKeyId = running.platform.auditSigner.keyId;
    expect(newKeyId).to.not.equal(oldKeyId);
    // A token of the old key is refused; signing in again gives one of the new key.
    expect((await running.request('GET', '/api/v1/org/audit-logs', { headers: as(owner) })).status).to.equal(401);
    owner = await signIn(running, owner);
    const verified = await running.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) });
    expect(verified.json, verified.text).to.deep.include({ ok: true, first_break: null, checkpoints_checked: before.length });

    // The anchoring goes on after the old key's last checkpoint, signed with the new key.
    for (const name of ['After 1', 'After 2', 'After 3']) await gql(running, 'mutation ($name: String!) { create_workspace(name: $name) { id } }', { name }, owner.token);
    await anchored(running);
    const after = await checkpointsOf(running, owner.tenant_id);
    expect(after.length).to.be.greaterThan(before.length);
    expect(after.slice(before.length).every((checkpoint) => checkpoint.key_id === newKeyId)).to.equal(true);
    expect(after.map((checkpoint) => checkpoint.seq)).to.deep.equal(after.map((_, index) => (index + 1) * EVERY));
    const all = await running.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) });
    expect(all.json).to.deep.include({ ok: true, checkpoints_checked: after.length, anchored_through_seq: after.length * EVERY });
    const exported = (await running.request('GET', '/api/v1/org/audit-logs/export', { headers: as(owner) })).text.trim().split('\n').map((line) => JSON.parse(line));
    expect(exported.filter((line) => line.record === 'signing_key').map((line) => line.key_id)).to.deep.equal([newKeyId, oldKeyId]);
    expect(verifyExportOffline(exported)).to.equal(after.length);

    // Without the old public half, the first old checkpoint is reported.
    running = await start({ TOKEN_SECRET_KEY: newSecret });
    const forgetful = await running.request('GET', '/api/v1/org/audit-logs/verify', { headers: as(owner) });
    expect(forgetful.json.ok).to.equal(false);
    expect(forgetful.json.first_break).to.deep.include({ seq: EVERY, reason: 'checkpoint_signature_invalid' });
  });
});
