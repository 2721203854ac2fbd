/**
 * Combines calls that arrive while the resource is busy: up to `maxInFlight` runs go at
 * once, each as soon as it is asked for; a call that finds them all busy waits, and every
 * call waiting when a run ends goes in the next run together (up to `maxItems`).
 *
 * Why not a time window (DataLoader's "same turn of the event loop"): on a busy single
 * chain the appends are serial, so a window only adds its delay to every statement, and
 * the chain's throughput with it (measured: 2,613–3,136 → 2,310–2,331 req/s). Combining
 * only what queues behind busy runs costs an idle caller nothing, and under load takes as
 * much as has piled up.
 *
 * `run` answers one result per item, in order: a value, or an Error for that item alone.
 * If `run` itself throws, every item of that run fails with the error.
 */
export class Combiner<I, R> {
  private readonly waiting: { item: I; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private inFlight = 0;

  constructor(
    private readonly run: (items: I[]) => Promise<(R | Error)[]>,
    private readonly maxInFlight = 2,
    private readonly maxItems = 32,
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  /** Runs in flight (tests, metrics). */
  get busy(): number {
    return this.inFlight;
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.maxItems);
      this.inFlight += 1;
      void this.run(batch.map((e) => e.item))
        .then(
          (results) => batch.forEach((e, i) => {
            const r = results[i];
            if (r instanceof Error) e.reject(r);
            else if (i >= results.length) e.reject(new Error(`combined run answered ${results.length} results for ${batch.length} items`));
            else e.resolve(r as R);
          }),
          (err: unknown) => batch.forEach((e) => e.reject(err)),
        )
        .finally(() => {
          this.inFlight -= 1;
          this.pump();
        });
    }
  }
}
