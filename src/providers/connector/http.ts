// The real connector: POST {CONNECTOR_URL}{path} with params as JSON and a
// bearer token; the answer (SSE or NDJSON) is parsed as it arrives.
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

/**
 * The one outbound call of this provider. Plain fetch with an abort signal for
 * now; src/lib/outbound-http.ts (SSRF-safe client) replaces it at merge.
 */
export function postJson(url: string, body: unknown, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body), signal });
}

export class HttpConnectorProvider implements ConnectorProvider {
  readonly name = 'http';
  readonly sandbox = false;
  constructor(private readonly config: HttpConnectorConfig) {}

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
      return new ConnectorError(`connector ${started ? 'stream broke off' : 'unreachable'}: ${(err as Error)?.message ?? String(err)}`, started);
    };
    try {
      arm();
      let response: Response;
      try {
        response = await postJson(this.config.url + request.path, request.params, headers, controller.signal);
      } catch (err) {
        throw fail(err);
      }
      if (!response.ok || !response.body) {
        const text = await response.text().catch(() => '');
        throw new ConnectorError(`connector answered HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`, false);
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
          if (parser.pending() > this.config.maxFrameChars) throw new ConnectorError(`connector frame longer than ${this.config.maxFrameChars} characters`, true);
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
