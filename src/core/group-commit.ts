/**
 * Group commit per key: work items with the same key (one fiscal chain) are run in
 * batches, one database transaction per batch, in arrival order; different keys run
 * concurrently.
 *
 * Why: a chain is serial by law (each record names the previous one), so its appends
 * cannot run side by side; one transaction per append made a busy location wait on a
 * commit (and its fsync) per record. While a batch commits, the next requests queue up
 * here, and the next transaction takes all of them: the chain head is locked once, rows
 * are written with multi-row statements, and one fsync covers the batch. Across
 * processes the chain head's row lock still serializes batches.
 *
 * The batch is taken from the queue only once its transaction has begun (`take`): the
 * time spent waiting for a pooled connection, or for the embedded store (PGlite runs one
 * transaction at a time), lets more appends join it instead of each waiting its turn alone.
 *
 * If a batch fails, each of its items is run again alone, so one bad item (a duplicate
 * idempotency key, a record that cannot be built) fails by itself and the others commit.
 */
export class GroupCommitter<I, R> {
  private readonly queues = new Map<string, { item: I; resolve: (r: R) => void; reject: (e: unknown) => void }[]>();

  /**
   * @param runBatch runs a batch of one key in one transaction: it calls `take()` once,
   *   when its transaction has begun, for the items, and returns one result per item, in
   *   order (all committed), or throws (nothing committed).
   * @param maxBatch upper bound of items per transaction (statement size, lock time).
   */
  constructor(
    private readonly runBatch: (key: string, take: () => I[]) => Promise<R[]>,
    private readonly maxBatch = 64,
  ) {}

  run(key: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const queue = this.queues.get(key);
      if (queue) {
        queue.push({ item, resolve, reject });
        return;
      }
      this.queues.set(key, [{ item, resolve, reject }]);
      void this.drain(key);
    });
  }

  /** Keys with queued or running work (tests, metrics). */
  get size(): number {
    return this.queues.size;
  }

  private async drain(key: string): Promise<void> {
    type Entry = { item: I; resolve: (r: R) => void; reject: (e: unknown) => void };
    const queue = this.queues.get(key)!;
    // The queue stays registered while a batch runs, so arrivals join it for the next batch.
    while (queue.length > 0) {
      // One turn of the event loop first: requests whose bytes already arrived get parsed
      // and join this batch. The embedded store runs a whole transaction without reading
      // the network (its queries are microtasks), so without this every batch held one item.
      await new Promise<void>((resolve) => setImmediate(resolve));
      let batch: Entry[] | undefined;
      const take = () => {
        batch ??= queue.splice(0, this.maxBatch);
        return batch.map((e) => e.item);
      };
      try {
        const results = await this.runBatch(key, take);
        (batch ?? []).forEach((e, i) => e.resolve(results[i]!));
      } catch (err) {
        // Failed before taking anything (no connection): the items it would have taken fail.
        batch ??= queue.splice(0, this.maxBatch);
        if (batch.length === 1) {
          batch[0]!.reject(err);
          continue;
        }
        // Find the culprit(s): every item alone, in order.
        for (const e of batch) {
          try {
            e.resolve((await this.runBatch(key, () => [e.item]))[0]!);
          } catch (one) {
            e.reject(one);
          }
        }
      }
    }
    this.queues.delete(key);
  }
}
