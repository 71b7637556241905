// A connector backend (spec 4.10): answers POST {path} with params by
// streaming records, as server-sent events or newline-delimited JSON.

export interface ConnectorRequest {
  /** The connector path, e.g. `/get-leads` (starts with `/`). */
  path: string;
  /** Forwarded as the JSON body. */
  params: Record<string, unknown>;
  /** The store the records go to (the sandbox shapes its records after it; the real connector is not told). */
  repository: string;
  /** Aborts the request and the stream (the caller has what it needs, or gave up). */
  signal: AbortSignal;
}

export interface ConnectorProvider {
  readonly name: string;
  readonly sandbox: boolean;
  /**
   * The frames of the answer as they arrive: each yielded array holds the
   * data of the frames completed by one received chunk (text, not yet parsed
   * as JSON). Throws ConnectorError when the connector cannot be reached,
   * refuses, goes silent for too long or breaks off mid-stream.
   */
  stream(request: ConnectorRequest): AsyncIterable<string[]>;
}

/** The connector failed; `started` tells whether any of its answer had arrived. */
export class ConnectorError extends Error {
  constructor(
    message: string,
    readonly started: boolean,
  ) {
    super(message);
    this.name = 'ConnectorError';
  }
}
