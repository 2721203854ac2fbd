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
 * idempotency key, a record that cannot be built) fails by itself and the others commit;
 * unless the error is no item's own (`failsEveryItem`: the store unavailable), when every
 * item fails with it at once: run again one by one, the last of N items of a batch would
 * wait N times the store's bound before its answer (503).
 *
 * Pipelining (`maxInFlight` > 1): a batch may `release()` its key once it has taken and
 * built its items; the next batch then takes and builds its own while the first is still
 * writing, and waits for `previous` before it writes. Only the caller knows whether its
 * batch can be built on what the one before it will leave (a chain head predicted in
 * Node): without `release()` batches of a key run one after the other.
 */
/** What a batch is told about its place in its key's order (see `maxInFlight`). */
export interface Turn {
  /** The key's previous batch was still running when this one began (it released early). */
  readonly pipelined: boolean;
  /** Settles (never rejects) once the key's previous batch is over, its retries included. */
  readonly previous: Promise<void>;
  /** Lets the key's next batch begin now (take and build), while this one goes on. */
  release(): void;
}

/** The turn of a batch that runs alone: nothing before it, nothing let in beside it. */
const ALONE: Turn = { pipelined: false, previous: Promise.resolve(), release: () => {} };

interface Entry<I, R> {
  item: I;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

interface KeyState<I, R> {
  entries: Entry<I, R>[];
  /** Batches begun and not over. */
  running: number;
  /** A batch is about to begin or has begun and not released. */
  starting: boolean;
  /** The last batch begun: over when this settles. */
  tail: Promise<void>;
}

export class GroupCommitter<I, R> {
  private readonly queues = new Map<string, KeyState<I, R>>();

  /**
   * @param runBatch runs a batch of one key in one transaction: it calls `take()` once,
   *   when its transaction has begun, for the items, and returns one result per item, in
   *   order (all committed), or throws (nothing committed).
   * @param maxBatch upper bound of items per transaction (statement size, lock time).
   * @param maxInFlight batches of one key begun and not over at once (1: one after the
   *   other; more only through `Turn.release`).
   * @param failsEveryItem whether a batch's error is every item's (not one item's own):
   *   then each fails with it, none is run again alone.
   */
  constructor(
    private readonly runBatch: (key: string, take: () => I[], turn: Turn) => Promise<R[]>,
    private readonly maxBatch = 64,
    private readonly maxInFlight = 1,
    private readonly failsEveryItem: (err: unknown) => boolean = () => false,
  ) {}

  run(key: string, item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let state = this.queues.get(key);
      if (!state) {
        state = { entries: [], running: 0, starting: false, tail: Promise.resolve() };
        this.queues.set(key, state);
      }
      state.entries.push({ item, resolve, reject });
      this.pump(key, state);
    });
  }

  /** Keys with queued or running work (tests, metrics). */
  get size(): number {
    return this.queues.size;
  }

  private pump(key: string, state: KeyState<I, R>): void {
    if (state.starting || state.running >= this.maxInFlight) return;
    if (state.entries.length === 0) {
      // The key stays registered while a batch runs, so arrivals join it for the next batch.
      if (state.running === 0 && this.queues.get(key) === state) this.queues.delete(key);
      return;
    }
    state.starting = true;
    // One turn of the event loop first: requests whose bytes already arrived get parsed
    // and join this batch. The embedded store runs a whole transaction without reading
    // the network (its queries are microtasks), so without this every batch held one item.
    setImmediate(() => this.begin(key, state));
  }

  private begin(key: string, state: KeyState<I, R>): void {
    const previous = state.tail;
    const pipelined = state.running > 0;
    state.running += 1;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      state.starting = false;
      this.pump(key, state);
    };
    let batch: Entry<I, R>[] | undefined;
    const take = () => {
      batch ??= state.entries.splice(0, this.maxBatch);
      return batch.map((e) => e.item);
    };
    const over = (async () => {
      // Settled after the bookkeeping below: whoever awaits a result finds the key's state
      // already moved on (the next batch pumped, an idle key gone).
      let settle = () => {};
      try {
        const results = await this.runBatch(key, take, { pipelined, previous, release });
        const done = batch ?? [];
        settle = () => done.forEach((e, i) => e.resolve(results[i]!));
      } catch (err) {
        // Failed before taking anything (no connection): the items it would have taken fail.
        const failed = (batch ??= state.entries.splice(0, this.maxBatch));
        if (failed.length === 1 || this.failsEveryItem(err)) {
          settle = () => failed.forEach((e) => e.reject(err));
        } else {
          // Find the culprit(s): every item alone, in order, once the batch before is over.
          await previous;
          for (const e of failed) {
            try {
              e.resolve((await this.runBatch(key, () => [e.item], ALONE))[0]!);
            } catch (one) {
              e.reject(one);
            }
          }
        }
      }
      state.running -= 1;
      release();
      this.pump(key, state);
      settle();
    })();
    state.tail = over;
  }
}
