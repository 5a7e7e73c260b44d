import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { AUDIT_ANCHORING, AuditAnchoring, type AuditAnchoringSettings } from '../../application/audit-log/audit-anchoring';
import type { RecordedEvent } from '../../application/ports/event-store';
import { silentLogger } from '../../application/ports/logger';
import { type AuditCheckpointEvent, auditCheckpointStream } from '../../domain/audit-checkpoint/audit-checkpoint';
import { Ed25519AuditSigner } from '../../infrastructure/crypto/audit-signer';
import { GENESIS_HASH, auditEntryHash, chainEntry, chainedFieldsOf, isChainedEvent } from '../../projections/audit-log';
import { type EmbeddedStores, ManualClock, embeddedStores } from '../support/stores';
import { generateEd25519KeyPair } from '../../infrastructure/crypto/keys';

const EVERY = 5;
const INTERVAL_MS = 300_000;

describe('audit anchoring (signed checkpoints recomputed from the event log)', () => {
  let clock: ManualClock;
  let stores: EmbeddedStores;
  const keys = generateEd25519KeyPair();
  const signer = new Ed25519AuditSigner(keys.privateKey, keys.publicKey);
  const settings: AuditAnchoringSettings = { entriesPerCheckpoint: EVERY, intervalMs: INTERVAL_MS, pollMs: 3_600_000 };
  const anchoring = (on: EmbeddedStores = stores, signedBy = signer) => new AuditAnchoring({ ...on.commands, readStore: on.readStore, signer: signedBy, logger: silentLogger }, settings);

  beforeEach(() => {
    clock = new ManualClock();
    stores = embeddedStores(clock);
  });
  afterEach(() => stores.dispose());

  /** `count` events of a tenant, each on its own stream, as any write would be. */
  async function happen(tenantId: string, count: number): Promise<void> {
    for (let index = 0; index < count; index += 1) {
      const metadata = { tenant_id: tenantId, actor: { kind: 'user' as const, id: 'u1' }, request_id: randomUUID(), correlation_id: randomUUID(), causation_id: null, occurred_at: clock.now().toISOString(), ip: null };
      await stores.eventStore.appendToStream(`thing-${randomUUID()}`, [{ id: randomUUID(), type: 'ThingHappened', data: { index, nested: { b: 2, a: 1 } }, metadata }]);
    }
  }

  const checkpoints = async (tenantId: string, on = stores): Promise<Array<AuditCheckpointEvent['data']>> =>
    (await on.eventStore.readStream(auditCheckpointStream(tenantId))).map((event) => event.data as AuditCheckpointEvent['data']);

  /** The tenant's chain computed here from every event of `$all`: the hash after each entry. */
  async function chainOf(tenantId: string): Promise<string[]> {
    const hashes: string[] = [];
    let previous = GENESIS_HASH;
    for (const event of await stores.eventStore.readAll()) {
      if (!isChainedEvent(event) || event.metadata.tenant_id !== tenantId) continue;
      previous = auditEntryHash(previous, chainedFieldsOf(event as RecordedEvent & { metadata: { tenant_id: string } }, hashes.length + 1));
      hashes.push(previous);
    }
    return hashes;
  }

  it('hashes an event the store shares once per place in a chain, and anew at another place or after another hash', async () => {
    await happen('t1', 1);
    const [shared] = await stores.eventStore.readAll();
    expect(Object.isFrozen(shared)).to.equal(true);
    const expected = (seq: number, prev: string) => auditEntryHash(prev, chainedFieldsOf(shared, seq));
    const first = chainEntry(shared, 1, GENESIS_HASH);
    expect(first.hash).to.equal(expected(1, GENESIS_HASH));
    expect(chainEntry(shared, 1, GENESIS_HASH)).to.equal(first);
    expect(chainEntry(shared, 2, GENESIS_HASH).hash).to.equal(expected(2, GENESIS_HASH));
    expect(chainEntry(shared, 1, first.hash).hash).to.equal(expected(1, first.hash));
    // An event its reader owns (not frozen) is hashed each time.
    const owned = { ...shared, data: { ...(shared.data as object) } };
    expect(chainEntry(owned, 1, GENESIS_HASH)).to.not.equal(chainEntry(owned, 1, GENESIS_HASH));
    expect(chainEntry(owned, 1, GENESIS_HASH).hash).to.equal(first.hash);
  });

  it('anchors every N entries per tenant, with the chain head recomputed from the events and signed', async () => {
    await happen('t1', 12);
    await happen('t2', 3);
    await anchoring().runOnce();
    const chain = await chainOf('t1');
    const recorded = await checkpoints('t1');
    expect(recorded.map(({ seq, entries, chain_head_hash }) => ({ seq, entries, chain_head_hash }))).to.deep.equal([
      { seq: 5, entries: 5, chain_head_hash: chain[4] },
      { seq: 10, entries: 5, chain_head_hash: chain[9] },
    ]);
    expect(recorded.every((checkpoint) => checkpoint.key_id === signer.keyId && checkpoint.tenant_id === 't1')).to.equal(true);
    // Below the count and not old enough yet.
    expect(await checkpoints('t2')).to.deep.equal([]);
  });

  it('anchors what is pending once the oldest entry is older than the interval, and never anchors its own checkpoints', async () => {
    const job = anchoring();
    await happen('t1', 3);
    await job.runOnce();
    clock.advance(INTERVAL_MS - 1);
    await job.runOnce();
    expect(await checkpoints('t1')).to.deep.equal([]);
    clock.advance(1);
    await job.runOnce();
    expect((await checkpoints('t1')).map(({ seq, entries }) => ({ seq, entries }))).to.deep.equal([{ seq: 3, entries: 3 }]);
    // The checkpoint is in the tenant's log, but not an entry of its chain: no checkpoint of a checkpoint.
    clock.advance(10 * INTERVAL_MS);
    await job.runOnce();
    await job.runOnce();
    expect(await checkpoints('t1')).to.have.length(1);
    await happen('t1', 1);
    clock.advance(INTERVAL_MS);
    await job.runOnce();
    expect((await checkpoints('t1')).map(({ seq, entries }) => ({ seq, entries }))).to.deep.equal([{ seq: 3, entries: 3 }, { seq: 4, entries: 1 }]);
    expect((await checkpoints('t1'))[1].chain_head_hash).to.equal((await chainOf('t1'))[3]);
  });

  it('resumes after a restart from the oldest entry not yet anchored, and records each checkpoint once', async () => {
    await happen('t1', 7);
    await happen('t2', 2);
    await happen('t1', 1);
    await anchoring().runOnce();
    const stored = (await stores.readStore.getProjectionState(AUDIT_ANCHORING))!.checkpoint;
    expect(stored).to.be.below(await stores.eventStore.headPosition());
    // A new process: nothing of the first one's memory.
    stores = stores.reopen();
    await happen('t1', 2);
    await happen('t2', 3);
    await anchoring().runOnce();
    const chain1 = await chainOf('t1');
    const chain2 = await chainOf('t2');
    expect((await checkpoints('t1')).map(({ seq, chain_head_hash }) => ({ seq, chain_head_hash }))).to.deep.equal([
      { seq: 5, chain_head_hash: chain1[4] },
      { seq: 10, chain_head_hash: chain1[9] },
    ]);
    expect((await checkpoints('t2')).map(({ seq, chain_head_hash }) => ({ seq, chain_head_hash }))).to.deep.equal([{ seq: 5, chain_head_hash: chain2[4] }]);
  });

  it('lets two processes anchor the same log: each checkpoint once, and the later one follows the earlier', async () => {
    const first = anchoring();
    const second = anchoring();
    await happen('t1', 3);
    await second.runOnce(); // holds 3 entries, not due yet
    clock.advance(INTERVAL_MS);
    await first.runOnce(); // anchors them by time: seq 3
    await happen('t1', 9);
    await second.runOnce(); // its checkpoint at 5 no longer follows the last one: it continues from seq 3
    await first.runOnce();
    clock.advance(INTERVAL_MS);
    await Promise.all([second.runOnce(), first.runOnce()]);
    const recorded = await checkpoints('t1');
    const seqs = recorded.map((checkpoint) => checkpoint.seq);
    expect(seqs).to.deep.equal([3, 8, 12]);
    const chain = await chainOf('t1');
    recorded.forEach((checkpoint, index) => {
      expect(checkpoint.chain_head_hash, `checkpoint at ${checkpoint.seq}`).to.equal(chain[checkpoint.seq - 1]);
      expect(checkpoint.entries).to.equal(checkpoint.seq - (index === 0 ? 0 : recorded[index - 1].seq));
    });
  });

  it('does not build on a last checkpoint signed with another key, and goes on with the other tenants', async () => {
    const other = generateEd25519KeyPair();
    const intruder = new Ed25519AuditSigner(other.privateKey, other.publicKey);
    await happen('t1', 5);
    await anchoring(stores, intruder).runOnce();
    await happen('t1', 5);
    await happen('t2', 5);
    await anchoring().runOnce();
    expect((await checkpoints('t1')).map((checkpoint) => checkpoint.key_id)).to.deep.equal([intruder.keyId]);
    expect((await checkpoints('t2')).map((checkpoint) => checkpoint.key_id)).to.deep.equal([signer.keyId]);
  });
});
