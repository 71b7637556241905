// A provider failure during a live call: names the provider, so the call's
// record can say what failed (DESIGN.md "Voice agent": error { provider, message }).

export class ProviderFailure extends Error {
  constructor(
    readonly provider: string,
    message: string,
    /** true when trying again may help (5xx, timeout, dropped socket); false for refusals such as 401. */
    readonly retryable = true,
  ) {
    super(`${provider}: ${message}`);
    this.name = 'ProviderFailure';
  }
}
