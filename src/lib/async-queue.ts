// A push-based async iterable: producers (socket handlers, request
// completions) push values, end it, or fail it; one consumer reads with
// `for await`. Used where a provider's results arrive as events but the
// pipeline reads them as an AsyncIterable (speech-to-text streams).

export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly values: T[] = [];
  private waiting: { resolve(result: IteratorResult<T>): void; reject(error: unknown): void } | null = null;
  private finished = false;
  private failure: { error: unknown } | null = null;

  /** true once ended or failed: later pushes are dropped. */
  get closed(): boolean {
    return this.finished || this.failure !== null;
  }

  push(value: T): void {
    if (this.closed) return;
    if (this.waiting) {
      const waiting = this.waiting;
      this.waiting = null;
      waiting.resolve({ value, done: false });
    } else this.values.push(value);
  }

  /** The consumer reads what is queued, then the iteration ends. */
  end(): void {
    if (this.closed) return;
    this.finished = true;
    this.wake();
  }

  /** The consumer reads what is queued, then the iteration throws `error`. */
  fail(error: unknown): void {
    if (this.closed) return;
    this.failure = { error };
    this.wake();
  }

  /** Ends at once, dropping what is queued. */
  discard(): void {
    this.values.length = 0;
    this.end();
  }

  private wake(): void {
    if (!this.waiting || this.values.length) return;
    const waiting = this.waiting;
    this.waiting = null;
    if (this.failure) waiting.reject(this.failure.error);
    else waiting.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.values.length) return Promise.resolve({ value: this.values.shift()!, done: false });
        if (this.failure) return Promise.reject(this.failure.error);
        if (this.finished) return Promise.resolve({ value: undefined, done: true });
        return new Promise<IteratorResult<T>>((resolve, reject) => {
          this.waiting = { resolve, reject };
        });
      },
      return: () => {
        this.discard();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
