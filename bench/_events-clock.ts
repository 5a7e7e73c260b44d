// Time in the events bench: wall-clock milliseconds at the monotonic clock's resolution, so
// that an emit answered in the outside process and its event processed in the bench's process
// can be subtracted; and when each event arrived at the end it is waited for.

import { performance } from 'node:perf_hooks';

/** Wall-clock milliseconds with the monotonic clock's resolution: comparable across processes on one machine. */
export const wallClockMs = (): number => performance.timeOrigin + performance.now();

/** When each event id was seen processed, whether it is asked for before or after. */
export class Arrivals {
  private readonly seen = new Map<string, number>();
  private readonly waiting = new Map<string, (at: number) => void>();

  arrived(id: string, at: number = wallClockMs()): void {
    const resolve = this.waiting.get(id);
    if (resolve) {
      this.waiting.delete(id);
      resolve(at);
    } else this.seen.set(id, at);
  }

  /** Resolves with the time the event arrived. */
  when(id: string): Promise<number> {
    const at = this.seen.get(id);
    if (at !== undefined) {
      this.seen.delete(id);
      return Promise.resolve(at);
    }
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }
}
