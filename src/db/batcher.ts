// Gathers calls that arrive in the same event-loop turn and runs them as one
// batch (for writes, PostgreSQL's counterpart of SQLite's group commit, see
// group-commit.ts): under load one network poll brings many requests, and one
// statement for all of them costs one socket write and one round trip instead
// of one each (on SQLite, one statement run instead of many). A lone call
// waits one turn (setImmediate) and runs alone.

/** What a batch says about one of its items. */
export type Outcome<O> = { ok: true; value: O } | { ok: false; error: unknown };

export class Batcher<I, O> {
  /** A batcher for writes that answer nothing: `write` stores the items together, or throws for all of them. */
  static forWrites<I>(write: (items: I[]) => Promise<void>, maxBatch?: number): Batcher<I, void> {
    return new Batcher<I, void>(async (items) => {
      await write(items);
      return items.map(() => ({ ok: true as const, value: undefined }));
    }, maxBatch);
  }

  private queue: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  private scheduled = false;

  constructor(
    /** Runs the items together; returns one outcome per item, in order. */
    private readonly runBatch: (items: I[]) => Promise<Array<Outcome<O>>>,
    /** Most items in one batch. */
    private readonly maxBatch = 64,
  ) {}

  run(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.drain());
      }
    });
  }

  private drain(): void {
    this.scheduled = false;
    // Batches run concurrently (each on its own pooled connection); the pool bounds how many.
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.runBatch(batch.map((entry) => entry.item)).then(
        (outcomes) =>
          batch.forEach((entry, i) => {
            const outcome = outcomes[i];
            if (outcome?.ok) entry.resolve(outcome.value);
            else entry.reject(outcome ? outcome.error : new Error('batch returned no outcome for this item'));
          }),
        (error) => batch.forEach((entry) => entry.reject(error)),
      );
    }
  }
}
