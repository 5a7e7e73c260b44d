// Turns a one-at-a-time async iterable into batches: everything that is ready, up to a
// maximum. A pump reads ahead (bounded by `highWater`); the consumer is woken on the next
// macrotask, so a burst that arrives in microtasks lands in one batch.

export class Batches<T> implements AsyncIterable<T[]> {
  private readonly queue: T[] = [];
  private wake: (() => void) | null = null;
  private resumePump: (() => void) | null = null;
  private finished = false;
  private failure: unknown = null;

  constructor(
    private readonly source: AsyncIterable<T>,
    private readonly maxBatch: number,
    private readonly highWater = maxBatch * 2,
  ) {
    void this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for await (const item of this.source) {
        this.queue.push(item);
        this.signal();
        if (this.queue.length >= this.highWater) await new Promise<void>((resolve) => (this.resumePump = resolve));
      }
    } catch (error) {
      this.failure = error;
    }
    this.finished = true;
    this.signal();
  }

  private signal(): void {
    const wake = this.wake;
    if (!wake) return;
    this.wake = null;
    setImmediate(wake);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T[]> {
    for (;;) {
      while (this.queue.length === 0 && !this.finished) await new Promise<void>((resolve) => (this.wake = resolve));
      if (this.queue.length === 0) {
        if (this.failure) throw this.failure;
        return;
      }
      const batch = this.queue.splice(0, this.maxBatch);
      if (this.resumePump && this.queue.length < this.highWater) {
        const resume = this.resumePump;
        this.resumePump = null;
        resume();
      }
      yield batch;
    }
  }
}
