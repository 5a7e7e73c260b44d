// One process at a time runs a projection or an embedded saga group: the one holding its
// lease, stored with its checkpoint (ReadStore.acquireLease). The holder renews it every
// third of its time to live; the others try to take it at the same pace and stand by
// meanwhile, so a dead holder is replaced at most `ttlMs` plus a third of it after its last
// renewal, or at the next attempt when it is known to be gone (`holderIsGone`: a crashed
// process of the same machine, infrastructure/leases/local-processes.ts). Writes of the
// holder are fenced by its id (ProjectionCommit.holder), so a holder that was paused past its
// lease and replaced can no longer write.

import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Clock } from '../ports/clock';
import type { Logger } from '../ports/logger';
import type { ReadStore } from '../ports/read-store';

export const DEFAULT_LEASE_TTL_MS = 15_000;

export interface LeaseSettings {
  /** This process's id as a holder: one per process. */
  holder: string;
  /** How long a lease lasts without renewal. */
  ttlMs: number;
  /**
   * True when `holder` is known to run no more (a process of this machine that crashed): its
   * lease is taken at once rather than once it lapses. Absent: a lease is only taken when free or lapsed.
   */
  holderIsGone?: (holder: string) => boolean;
}

/** `hostname:pid:random`: tells the processes of one machine apart, and a restarted one from its past self. */
export function processHolderId(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

export function defaultLeaseSettings(): LeaseSettings {
  return { holder: processHolderId(), ttlMs: DEFAULT_LEASE_TTL_MS };
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done);
  });
}

export class Lease {
  private isHeld = false;
  /** Epoch ms the stored lease lasts until, as of the last take or renewal. */
  private heldUntil = 0;
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;

  constructor(
    private readonly deps: { readStore: ReadStore; clock: Clock; logger: Logger },
    /** The state the lease is stored with: a projection's name, or `saga:<group>`. */
    readonly name: string,
    /** Written only when the state does not exist yet. */
    private readonly version: number,
    private readonly settings: LeaseSettings,
    /** Called when the lease turns out to be someone else's: stop applying at once. */
    private readonly onLost: () => void,
  ) {}

  get holder(): string {
    return this.settings.holder;
  }

  /** True while this process holds the lease, as far as it knows. */
  get held(): boolean {
    return this.isHeld;
  }

  /** The pace of renewals and of attempts to take the lease. */
  private get interval(): number {
    return Math.max(1, Math.floor(this.settings.ttlMs / 3));
  }

  /** One attempt to take the lease; true when this process holds it. */
  async tryAcquire(): Promise<boolean> {
    const request = { projection: this.name, holder: this.holder, version: this.version, now: this.deps.clock.now(), ttlMs: this.settings.ttlMs };
    let lease = await this.deps.readStore.acquireLease(request);
    const other = lease !== null && lease.holder !== this.holder ? lease.holder : null;
    if (other !== null && this.settings.holderIsGone?.(other)) {
      // Taken only from that holder: if another took it meanwhile, this one waits as usual.
      lease = await this.deps.readStore.acquireLease({ ...request, replacing: other });
      if (lease?.holder === this.holder) this.deps.logger.warn({ lease: this.name, holder: this.holder, gone: other }, 'lease taken over from a process that is gone');
    }
    if (lease?.holder !== this.holder) return false;
    if (!this.isHeld) this.deps.logger.info({ lease: this.name, holder: this.holder }, 'lease taken');
    this.isHeld = true;
    this.heldUntil = Date.parse(lease.expires_at);
    this.scheduleRenewal();
    return true;
  }

  /** Tries every third of the TTL until the lease is held (true) or `signal` aborts (false). */
  async whenHeld(signal: AbortSignal): Promise<boolean> {
    while (!signal.aborted) {
      if (this.isHeld) return true;
      try {
        if (await this.tryAcquire()) return true;
      } catch (error) {
        this.deps.logger.warn({ lease: this.name, err: error }, 'could not try the lease');
      }
      await pause(this.interval, signal);
    }
    return false;
  }

  /** A fenced write found another holder (LeaseLostError): stop renewing and stand by. */
  lost(holder: string | null = null): void {
    if (this.isHeld) this.lose(holder);
  }

  /** Gives the lease up (after the last write), so a standing-by process takes over at once. */
  async release(): Promise<void> {
    const wasHeld = this.isHeld;
    this.isHeld = false;
    this.clearTimer();
    await this.renewing;
    if (!wasHeld) return;
    try {
      await this.deps.readStore.releaseLease(this.name, this.holder);
      this.deps.logger.info({ lease: this.name, holder: this.holder }, 'lease released');
    } catch (error) {
      // It lapses by itself after its TTL.
      this.deps.logger.warn({ lease: this.name, err: error }, 'could not release the lease');
    }
  }

  private scheduleRenewal(): void {
    this.clearTimer();
    this.timer = setTimeout(() => {
      this.timer = null;
      this.renewing = this.renew().finally(() => (this.renewing = null));
    }, this.interval);
    this.timer.unref();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async renew(): Promise<void> {
    if (!this.isHeld) return;
    try {
      const lease = await this.deps.readStore.renewLease({ projection: this.name, holder: this.holder, now: this.deps.clock.now(), ttlMs: this.settings.ttlMs });
      if (!this.isHeld) return;
      if (lease?.holder === this.holder) {
        this.heldUntil = Date.parse(lease.expires_at);
        this.scheduleRenewal();
      } else {
        this.lose(lease?.holder ?? null);
      }
    } catch (error) {
      if (!this.isHeld) return;
      if (this.deps.clock.now().getTime() >= this.heldUntil) {
        // Another process may have taken it by now: stop rather than guess.
        this.deps.logger.warn({ lease: this.name, err: error }, 'could not renew the lease before it lapsed');
        this.lose(null);
      } else {
        this.deps.logger.warn({ lease: this.name, err: error }, 'could not renew the lease; trying again');
        this.scheduleRenewal();
      }
    }
  }

  private lose(holder: string | null): void {
    this.isHeld = false;
    this.clearTimer();
    this.deps.logger.warn({ lease: this.name, holder: this.holder, taken_by: holder }, 'lease lost; standing by');
    this.onLost();
  }
}
