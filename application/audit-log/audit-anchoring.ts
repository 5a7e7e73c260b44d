// Audit anchoring: a job of the platform process that recomputes every tenant's audit chain
// from the event log itself (the events, folded with the audit log's own chain function, never
// the read model) and records a signed `AuditCheckpointRecorded` in the tenant's
// `auditCheckpoint-<tenant_id>` stream after every `entriesPerCheckpoint` entries, or once
// the oldest entry not yet anchored is `intervalMs` old, whichever comes first. Rewriting
// events and rebuilding the audit log then gives a chain that disagrees with the signatures
// (`verifyAuditChain`).
//
// - Order matters to a chain, so this is one ordered pass over `$all`, not a saga (whose
//   deliveries may be retried out of order).
// - A tenant's chain resumes from its last checkpoint (seq, hash, position), read from the log
//   when the tenant is first met; only tenants with entries not yet anchored stay in memory.
// - The stored position is where the oldest entry not yet anchored starts (or how far the
//   log was read), so a restart reads those entries again and skips what is anchored.
// - Idempotent: the checkpoint at entry N has an event id derived from tenant and N, and the
//   decider refuses one that does not follow the last; two processes doing the same work
//   record each checkpoint once, and the one that lost resumes from the winner's.
// - Checkpoints are not entries of the chain, so they never call for another checkpoint.

import {
  type AuditCheckpointCommand,
  type AuditCheckpointEvent,
  AuditCheckpointRecorded,
  type AuditCheckpointState,
  type AuditCheckpointStatement,
  auditCheckpointDecider,
  auditCheckpointEvents,
  auditCheckpointSigningText,
  auditCheckpointStream,
} from '../../domain/audit-checkpoint/audit-checkpoint';
import { isRight } from 'fp-ts/Either';
import { DomainError } from '../../domain/shared/errors';
import { GENESIS_HASH, auditChainOf, chainEntry } from '../../projections/audit-log';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { AuditSigner } from '../ports/audit-signer';
import type { DomainEventStore } from '../ports/domain-event-store';
import type { RecordedEvent } from '../ports/event-store';
import type { Logger } from '../ports/logger';
import type { ReadStore } from '../ports/read-store';
import { pause } from '../shared/lease';
import { systemContext } from '../shared/request-context';

export const AUDIT_ANCHORING = 'audit_anchoring';

export const auditCheckpointAggregate: Aggregate<AuditCheckpointCommand, AuditCheckpointEvent, AuditCheckpointState> = {
  decider: auditCheckpointDecider,
  events: auditCheckpointEvents,
};

export interface AuditAnchoringSettings {
  /** A checkpoint at the latest after this many entries of a tenant. */
  entriesPerCheckpoint: number;
  /** ... or once the oldest entry not yet anchored is this old. */
  intervalMs: number;
  /** How often the log is read for new entries. */
  pollMs: number;
}

/** A signed checkpoint to record in the tenant's checkpoint stream, once (its idempotency key). */
export interface CheckpointToRecord {
  tenantId: string;
  checkpoint: AuditCheckpointStatement & { signature: string };
  key: string;
}

/**
 * Records a checkpoint; a DomainError when the decider refuses it. The anchoring's pass may run
 * on the projection thread (infrastructure/sqlite/projection-thread.ts), which asks the serving
 * thread to append it there, so that one connection writes the events file.
 */
export type CheckpointRecorder = (toRecord: CheckpointToRecord) => Promise<void>;

export interface AuditAnchoringDependencies extends CommandDependencies {
  readStore: ReadStore;
  signer: AuditSigner;
  logger: Logger;
  /** How checkpoints are appended; default `recordAuditCheckpoint` on these dependencies. */
  record?: CheckpointRecorder;
}

/** Appends a checkpoint through its aggregate (the default recorder, and what the serving thread does for the projection thread). */
export async function recordAuditCheckpoint(deps: CommandDependencies, { tenantId, checkpoint, key }: CheckpointToRecord): Promise<void> {
  await handleCommand(
    deps,
    auditCheckpointAggregate,
    auditCheckpointStream(tenantId),
    { type: 'RecordAuditCheckpoint', data: checkpoint },
    { ...systemContext(key, AUDIT_ANCHORING), tenant_id: tenantId },
    { idempotencyKey: key },
  );
}

/** What runs the anchoring: AuditAnchoring itself, or its stand-in on the serving thread when it runs on the projection thread. */
export interface AuditAnchoringJob {
  start(): void;
  stop(): Promise<void>;
  /** Reads the log up to its head and records the checkpoints that are due. */
  runOnce(): Promise<void>;
}

interface TenantChain {
  /** The last entry folded into the chain (seq 0, the genesis hash and position 0 before the first). */
  head: { seq: number; hash: string; position: number };
  /** The last checkpoint recorded (seq 0 before the first). */
  anchored: { seq: number; position: number };
  /** The first entry after the last checkpoint: where it is and when it was recorded; null when every entry is anchored. */
  pending: { position: number; recordedAt: number } | null;
  /** Set when the chain cannot be continued safely (its last checkpoint is not ours); nothing more is anchored. */
  blocked: boolean;
}

const BATCH = 500;

const encoder = new TextEncoder();

/** The bytes a checkpoint's signature covers. */
export const auditCheckpointSigningBytes = (statement: AuditCheckpointStatement): Uint8Array => encoder.encode(auditCheckpointSigningText(statement));

/** The tenant's last checkpoint as recorded, or null; undecodable data comes back as null too. */
async function lastCheckpoint(eventStore: Pick<DomainEventStore, 'readStreamAsStored'>, tenantId: string): Promise<(AuditCheckpointEvent['data'] & { id: string }) | null> {
  const [last] = await eventStore.readStreamAsStored(auditCheckpointStream(tenantId), { direction: 'backwards', maxCount: 1 });
  if (!last || !(last.type === AuditCheckpointRecorded.type && isRight(AuditCheckpointRecorded.data.decode(last.data)))) return null;
  return { ...(last.data as AuditCheckpointEvent['data']), id: last.id };
}

export class AuditAnchoring implements AuditAnchoringJob {
  private readonly chains = new Map<string, TenantChain>();
  /** Position of `$all` read through; null until loaded from the stored state. */
  private scanned: number | null = null;
  private storedCursor: number | null = null;
  private queue: Promise<unknown> = Promise.resolve();
  private loop: Promise<void> | null = null;
  private stopping = false;
  /** Aborted by stop(): ends the pause between passes at once. */
  private running = new AbortController();

  constructor(
    private readonly deps: AuditAnchoringDependencies,
    private readonly settings: AuditAnchoringSettings,
  ) {}

  /** Reads the log up to its head and records the checkpoints that are due. Passes never overlap. */
  runOnce(): Promise<void> {
    const pass = this.queue.then(() => this.pass());
    this.queue = pass.catch(() => undefined);
    return pass;
  }

  start(): void {
    this.stopping = false;
    if (this.running.signal.aborted) this.running = new AbortController();
    this.loop ??= this.follow();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.running.abort();
    await this.loop;
    this.loop = null;
    await this.queue;
  }

  private async follow(): Promise<void> {
    while (!this.stopping) {
      try {
        await this.runOnce();
      } catch (error) {
        this.deps.logger.error({ err: error }, 'audit anchoring pass failed; trying again');
      }
      if (this.stopping) return;
      await pause(this.settings.pollMs, this.running.signal);
    }
  }


  private async pass(): Promise<void> {
    this.scanned ??= (await this.deps.readStore.getProjectionState(AUDIT_ANCHORING))?.checkpoint ?? 0;
    this.storedCursor ??= this.scanned;
    for (;;) {
      // As stored, as the audit projection reads them: the chain hashes the recorded data.
      const batch = await this.deps.eventStore.readAllAsStored({ fromPosition: this.scanned, maxCount: BATCH });
      for (const event of batch) {
        if (this.stopping) return;
        const chainId = auditChainOf(event);
        if (chainId !== null) await this.fold(chainId, event);
        this.scanned = event.position;
      }
      if (batch.length < BATCH) break;
    }
    const now = this.deps.clock.now().getTime();
    for (const [tenantId, chain] of [...this.chains]) {
      const dueByCount = chain.head.seq - chain.anchored.seq >= this.settings.entriesPerCheckpoint;
      const dueByTime = chain.pending !== null && now - chain.pending.recordedAt >= this.settings.intervalMs;
      if (!chain.blocked && (dueByCount || dueByTime)) await this.anchor(tenantId, chain);
      else if (!chain.blocked && chain.pending === null) this.chains.delete(tenantId);
    }
    await this.storeCursor();
  }

  private async fold(tenantId: string, event: RecordedEvent): Promise<void> {
    const chain = this.chains.get(tenantId) ?? (await this.resume(tenantId));
    // Already inside the last checkpoint (a restart reads some entries again).
    if (event.position <= chain.head.position) return;
    const seq = chain.head.seq + 1;
    chain.head = { seq, hash: chainEntry(event, seq, chain.head.hash).hash, position: event.position };
    if (chain.blocked) return;
    chain.pending ??= { position: event.position, recordedAt: Date.parse(event.recorded_at) };
    if (seq - chain.anchored.seq >= this.settings.entriesPerCheckpoint) await this.anchor(tenantId, chain);
  }

  /** A tenant's chain from its last checkpoint, or from the start when it has none. */
  private async resume(tenantId: string): Promise<TenantChain> {
    const last = await lastCheckpoint(this.deps.eventStore, tenantId);
    const chain: TenantChain = last
      ? { head: { seq: last.seq, hash: last.chain_head_hash, position: last.position }, anchored: { seq: last.seq, position: last.position }, pending: null, blocked: false }
      : { head: { seq: 0, hash: GENESIS_HASH, position: 0 }, anchored: { seq: 0, position: 0 }, pending: null, blocked: false };
    if (last && !this.deps.signer.verify(auditCheckpointSigningBytes(last), last.signature, last.key_id)) {
      // Building on a checkpoint we did not sign would vouch for it; verify reports it.
      this.deps.logger.error({ tenant_id: tenantId, checkpoint_id: last.id, seq: last.seq }, 'the last audit checkpoint of this tenant is not signed by this platform; not anchoring it further');
      chain.blocked = true;
    }
    this.chains.set(tenantId, chain);
    return chain;
  }

  private async anchor(tenantId: string, chain: TenantChain): Promise<void> {
    const statement: AuditCheckpointStatement = {
      tenant_id: tenantId,
      seq: chain.head.seq,
      chain_head_hash: chain.head.hash,
      position: chain.head.position,
      entries: chain.head.seq - chain.anchored.seq,
      anchored_at: this.deps.clock.now().toISOString(),
      key_id: this.deps.signer.keyId,
    };
    const signature = this.deps.signer.sign(auditCheckpointSigningBytes(statement));
    const key = `audit_checkpoint:${tenantId}:${statement.seq}`;
    const toRecord = { tenantId, checkpoint: { ...statement, signature }, key };
    try {
      await (this.deps.record ? this.deps.record(toRecord) : recordAuditCheckpoint(this.deps, toRecord));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (error.code === 'audit_checkpoint_out_of_date') return this.catchUpWith(tenantId, chain);
      this.deps.logger.error({ tenant_id: tenantId, seq: statement.seq, err: error }, 'audit checkpoint refused; not anchoring this tenant further');
      chain.blocked = true;
      chain.pending = null;
      return;
    }
    chain.anchored = { seq: statement.seq, position: statement.position };
    chain.pending = null;
    // Resumed from its checkpoint when next met: memory holds only tenants with entries to anchor.
    this.chains.delete(tenantId);
  }

  /** Another process recorded a checkpoint first: continue from it. */
  private async catchUpWith(tenantId: string, chain: TenantChain): Promise<void> {
    const last = await lastCheckpoint(this.deps.eventStore, tenantId);
    if (!last) return;
    chain.anchored = { seq: last.seq, position: last.position };
    if (last.seq >= chain.head.seq) {
      chain.head = { seq: last.seq, hash: last.chain_head_hash, position: last.position };
      chain.pending = null;
    }
  }

  /** Stores where a restart must read from: the oldest entry not yet anchored, else how far the log was read. */
  private async storeCursor(): Promise<void> {
    let cursor = this.scanned ?? 0;
    for (const chain of this.chains.values()) {
      if (chain.pending && !chain.blocked) cursor = Math.min(cursor, chain.pending.position - 1);
    }
    if (cursor === this.storedCursor) return;
    await this.deps.readStore.putProjectionState({ name: AUDIT_ANCHORING, version: 1, checkpoint: cursor, status: 'running', error: null, updated_at: this.deps.clock.now().toISOString() });
    this.storedCursor = cursor;
  }
}
