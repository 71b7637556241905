// The calls whose media stream this instance carries: the voice runner adds
// and removes them; callbacks that reach this instance (answering-machine
// verdicts) are handed to them at once, others go through the database and
// the heartbeat (store.ts).

export interface LiveCall {
  /** Twilio's asynchronous machine detection decided (human, machine_end_beep, …). */
  answeredBy(verdict: string): void;
  /** Ends the call now (this instance is shutting down): outcome `instance_stopped`, its record written as for any end. */
  stop(): void;
  /** Settles when the call's end has been reported and its record written. */
  readonly done: Promise<void>;
}

export class LiveCalls {
  private readonly calls = new Map<string, LiveCall>();

  add(sessionId: string, call: LiveCall): void {
    this.calls.set(sessionId, call);
  }

  remove(sessionId: string): void {
    this.calls.delete(sessionId);
  }

  get(sessionId: string): LiveCall | undefined {
    return this.calls.get(sessionId);
  }

  all(): LiveCall[] {
    return [...this.calls.values()];
  }

  ids(): string[] {
    return [...this.calls.keys()];
  }

  get size(): number {
    return this.calls.size;
  }
}
