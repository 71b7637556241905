// The model asked ahead (docs/decisions/voice-agent.md, "Preemptive model
// request"): once every word of the caller's turn is final, the session sends
// the request the turn's reply would send, while the endpoint's silence runs
// out. Its answer is only buffered: nothing is said, no tool runs, nothing is
// recorded. The reply then asks the model through `model`, which hands over
// this answer when the request is exactly the one asked ahead (same messages,
// tools and tool choice) and goes to the model otherwise. An answer nobody
// took is aborted.
import type { CompletionRequest, LanguageModel, ModelDelta } from '../../providers/language-model/interface.js';

type AskedRequest = Omit<CompletionRequest, 'signal'>;

const requestKey = (r: AskedRequest) => JSON.stringify([r.messages, r.tools, r.toolChoice ?? null]);

export class ModelPrefetch {
  private readonly controller = new AbortController();
  private readonly key: string;
  private readonly deltas: ModelDelta[] = [];
  private finished = false;
  private failure: unknown = null;
  private wake: (() => void) | null = null;
  private taken = false;
  /** The model for the reply: this answer once, for the request asked ahead; the model itself for anything else. */
  readonly model: LanguageModel;

  constructor(
    private readonly upstream: LanguageModel,
    request: AskedRequest,
  ) {
    this.key = requestKey(request);
    this.model = {
      name: upstream.name,
      sandbox: upstream.sandbox,
      complete: (asked) => {
        if (!this.asks(asked)) {
          if (!this.taken) this.abort();
          return upstream.complete(asked);
        }
        this.taken = true;
        return this.replay(asked.signal);
      },
    };
    void this.pump(request);
  }

  /** Whether this is the answer to `request` (and nobody has taken it yet). */
  asks(request: AskedRequest) {
    return !this.taken && requestKey(request) === this.key;
  }

  /** The turn went on, or the reply asked something else: the request ahead is cancelled (a no-op once it finished). */
  abort() {
    if (!this.finished) this.controller.abort(new Error('the turn went on'));
  }

  private async pump(request: AskedRequest) {
    try {
      for await (const delta of this.upstream.complete({
        ...request,
        signal: this.controller.signal,
      })) {
        this.deltas.push(delta);
        this.wake?.();
      }
    } catch (error) {
      this.failure = error;
    } finally {
      this.finished = true;
      this.wake?.();
    }
  }

  private async *replay(signal: AbortSignal): AsyncGenerator<ModelDelta> {
    const onAbort = () => this.controller.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      for (let i = 0; ; ) {
        if (signal.aborted) throw signal.reason;
        if (i < this.deltas.length) {
          yield this.deltas[i++]!;
          continue;
        }
        if (this.finished) {
          if (this.failure) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => {
          this.wake = resolve;
        });
        this.wake = null;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
  }
}
