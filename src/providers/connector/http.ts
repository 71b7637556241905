// The real connector: POST {CONNECTOR_URL}{path} with params as JSON and a
// bearer token; the answer (SSE or NDJSON) is parsed as it arrives.
import { type OutboundHttp, createOperatorHttp } from '../../lib/outbound-http.js';
import { type FrameParser, parserFor } from './frames.js';
import { type ConnectorProvider, type ConnectorRequest, ConnectorError } from './interface.js';

export interface HttpConnectorConfig {
  /** Base URL; the request path is appended to it. */
  url: string;
  token: string | null;
  /** Longest wait for the answer's headers, and for each piece of the stream after them. */
  idleTimeoutMs: number;
  /** Largest frame (characters); a longer one fails the stream. */
  maxFrameChars: number;
}

/** Most of a refusal's body read to quote it in the error. */
const REFUSAL_BYTES = 4096;

export class HttpConnectorProvider implements ConnectorProvider {
  readonly name = 'http';
  readonly sandbox = false;
  /**
   * The shared outbound client, streaming: no deadline for the whole answer (a
   * long ingestion is normal; the caller's signal and the idle timer below end
   * it) and no size cap (frames are parsed as they arrive and each is bounded
   * by maxFrameChars). Its own connect / header / between-pieces timeouts are a
   * backstop at twice the idle timeout, so the idle timer speaks first.
   */
  private readonly http: OutboundHttp;
  constructor(private readonly config: HttpConnectorConfig) {
    this.http = createOperatorHttp({
      timeoutMs: 2 * config.idleTimeoutMs,
      deadlineMs: null,
      maxBytes: Number.POSITIVE_INFINITY,
    });
  }

  /** The one outbound call of this provider. */
  private postJson(
    url: string,
    body: unknown,
    headers: Record<string, string>,
    signal: AbortSignal,
  ): Promise<Response> {
    return this.http(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal,
    });
  }

  async *stream(request: ConnectorRequest): AsyncIterable<string[]> {
    // One controller for the caller's abort and our idle timer; restarted on every piece that arrives.
    const controller = new AbortController();
    const abortFromCaller = () => controller.abort(request.signal.reason);
    if (request.signal.aborted) abortFromCaller();
    request.signal.addEventListener('abort', abortFromCaller, { once: true });
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort(new Error('idle timeout'));
      }, this.config.idleTimeoutMs);
    };
    const headers: Record<string, string> = { accept: 'text/event-stream, application/x-ndjson' };
    if (this.config.token) headers.authorization = `Bearer ${this.config.token}`;
    let started = false;
    const fail = (err: unknown): ConnectorError => {
      if (err instanceof ConnectorError) return err;
      if (timedOut) return new ConnectorError(`connector sent nothing for ${this.config.idleTimeoutMs} ms`, started);
      return new ConnectorError(
        `connector ${started ? 'stream broke off' : 'unreachable'}: ${(err as Error)?.message ?? String(err)}`,
        started,
      );
    };
    try {
      arm();
      let response: Response;
      try {
        // Inside the try: a path that would leave the base is a failed request, never sent.
        response = await this.postJson(
          connectorUrl(this.config.url, request.path).href,
          request.params,
          headers,
          controller.signal,
        );
      } catch (err) {
        throw fail(err);
      }
      if (!response.ok || !response.body) {
        const text = await readStart(response, REFUSAL_BYTES);
        throw new ConnectorError(
          `connector answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
          false,
        );
      }
      started = true;
      arm();
      const parser: FrameParser = parserFor(response.headers.get('content-type'));
      const decoder = new TextDecoder('utf-8');
      try {
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          // The timer measures the connector's silence, not the time the caller takes with the frames.
          clearTimeout(timer);
          const frames = parser.push(decoder.decode(chunk, { stream: true }));
          if (parser.pending() > this.config.maxFrameChars)
            throw new ConnectorError(`connector frame longer than ${this.config.maxFrameChars} characters`, true);
          if (frames.length) yield frames;
          arm();
        }
      } catch (err) {
        throw fail(err);
      }
      const last = [...parser.push(decoder.decode()), ...parser.end()];
      if (last.length) yield last;
    } finally {
      clearTimeout(timer);
      request.signal.removeEventListener('abort', abortFromCaller);
      // Stopping early (the caller broke off): close the connection.
      if (!controller.signal.aborted) controller.abort();
    }
  }
}

/** The start of a body as text (at most `limit` bytes read); the rest is not waited for. */
async function readStart(response: Response, limit: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    while (length < limit) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      length += value.byteLength;
    }
  } catch {
    // A body that breaks off: quote what arrived.
  } finally {
    void reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limit)).trim();
}

/**
 * The URL of a connector request: `path` (normalised) under the base URL's
 * path, built with the WHATWG URL parser (as fetch will read it) and checked
 * against what was meant, so nothing the parser reinterprets can leave the
 * base's origin or path.
 */
export function connectorUrl(baseUrl: string, path: string): URL {
  const base = new URL(baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const url = new URL(`${basePath}${path}`, base.origin);
  if (
    url.origin !== base.origin ||
    url.pathname !== `${basePath}${path}` ||
    !(url.pathname === basePath || url.pathname.startsWith(`${basePath}/`))
  ) {
    throw new Error(`connector path ${JSON.stringify(path)} does not stay under ${base.origin}${basePath}/`);
  }
  return url;
}
