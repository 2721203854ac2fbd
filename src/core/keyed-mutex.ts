/**
 * Runs tasks with the same key one after another, in arrival order; tasks with different
 * keys run concurrently. Used to queue appends to one fiscal chain inside this process,
 * so that waiters wait here rather than each holding a database connection while they
 * queue on the chain head's row lock (which starved the pool for every other request).
 * Across processes the row lock still decides; this only makes the local wait cheap.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(task, task);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      // The last one out removes the key, so idle chains cost nothing.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  /** Keys with queued or running tasks (for tests and metrics). */
  get size(): number {
    return this.tails.size;
  }
}
