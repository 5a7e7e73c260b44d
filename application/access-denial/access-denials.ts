// Recording refused requests (403) for the audit log, bounded per principal and minute: the
// first `perMinute` denials of a user in a tenant in each clock minute are recorded one by
// one (`AccessDenied`); the rest are counted, and the count is recorded once for that
// minute (`AccessDenialsSuppressed`) when the minute is over (at the principal's next
// denial, at the sweep that runs every minute, or when the process stops). So a member
// cannot grow the event log at will, and no refusal goes unaccounted for.
//
// The counters are per process (like the embedded rate limiter): with several processes
// the bound is per process, and a crash loses the count of the current minute only.

import { type AccessDenialCommand, type AccessDenialEvent, accessDenialDecider, accessDenialEvents, accessDenialStream } from '../../domain/access-denial/access-denial';
import { type Aggregate, type CommandDependencies, handleCommand } from '../command-handling/handle-command';
import type { Logger } from '../ports/logger';
import type { RequestContext } from '../shared/request-context';

export const accessDenialAggregate: Aggregate<AccessDenialCommand, AccessDenialEvent, null> = { decider: accessDenialDecider, events: accessDenialEvents };

export const ACCESS_DENIAL_WINDOW_MS = 60_000;

export interface Denial {
  tenant_id: string;
  user_id: string;
  method: string;
  path: string;
  code: string;
}

interface DenialWindow {
  tenant_id: string;
  user_id: string;
  /** Start of the clock minute, ms since the epoch. */
  start: number;
  recorded: number;
  suppressed: number;
}

export class AccessDenialRecorder {
  private readonly windows = new Map<string, DenialWindow>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly deps: CommandDependencies & { logger: Logger },
    private readonly settings: { perMinute: number },
  ) {}

  /**
   * Records the denial, or only counts it when its principal is past the bound for this minute.
   * `context` is the principal's acting context (its actor, and subject when impersonated). Never throws.
   */
  async record(denial: Denial, context: RequestContext): Promise<void> {
    const now = this.deps.clock.now().getTime();
    const start = now - (now % ACCESS_DENIAL_WINDOW_MS);
    const key = `${denial.tenant_id}\u0000${denial.user_id}`;
    const ended = this.windows.get(key);
    if (ended && ended.start !== start) {
      this.windows.delete(key);
      await this.recordSuppressed(ended);
    }
    // Counted with no await in between, so concurrent requests of one principal share one budget.
    let window = this.windows.get(key);
    if (!window) {
      window = { tenant_id: denial.tenant_id, user_id: denial.user_id, start, recorded: 0, suppressed: 0 };
      this.windows.set(key, window);
    }
    if (window.recorded >= this.settings.perMinute) {
      window.suppressed += 1;
      return;
    }
    window.recorded += 1;
    await this.write({ type: 'RecordAccessDenial', data: denial }, { ...context, tenant_id: denial.tenant_id });
  }

  /** Records the counts of the minutes that are over, and forgets them. */
  async recordClosedWindows(): Promise<void> {
    const now = this.deps.clock.now().getTime();
    const current = now - (now % ACCESS_DENIAL_WINDOW_MS);
    for (const [key, window] of [...this.windows]) {
      if (window.start >= current) continue;
      this.windows.delete(key);
      await this.recordSuppressed(window);
    }
  }

  /** Sweeps once a minute, so a count is recorded even when its principal stops asking. */
  start(): void {
    this.sweeper ??= setInterval(() => void this.recordClosedWindows(), ACCESS_DENIAL_WINDOW_MS);
    this.sweeper.unref();
  }

  /** Stops sweeping and records every count still held, the current minute's included. */
  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    const open = [...this.windows.values()];
    this.windows.clear();
    for (const window of open) await this.recordSuppressed(window);
  }

  private async recordSuppressed(window: DenialWindow): Promise<void> {
    if (window.suppressed === 0) return;
    const { tenant_id, user_id } = window;
    await this.write(
      {
        type: 'RecordSuppressedAccessDenials',
        data: {
          tenant_id,
          user_id,
          count: window.suppressed,
          window_start: new Date(window.start).toISOString(),
          window_end: new Date(window.start + ACCESS_DENIAL_WINDOW_MS).toISOString(),
        },
      },
      { tenant_id, actor: { kind: 'user', id: user_id }, request_id: null, correlation_id: this.deps.ids.newId(), causation_id: null, ip: null },
    );
  }

  /** Best effort: the 403 is answered whether or not its record could be written. */
  private async write(command: AccessDenialCommand, context: RequestContext): Promise<void> {
    try {
      await handleCommand(this.deps, accessDenialAggregate, accessDenialStream(this.deps.ids.newId()), command, context);
    } catch (error) {
      this.deps.logger.warn({ err: error, command: command.type }, 'could not record an access denial');
    }
  }
}
