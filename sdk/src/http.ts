// The HTTP core: one typed request function over fetch. It fills path
// parameters, encodes the query, sends JSON, attaches the credential and turns
// every non-2xx answer into a WorkspaceApiError carrying the service's
// `{ message, code }`.
import type { ApiPath, MethodOf, Operation, RequestParts, SuccessOf } from './api-types.js';
import {
  DEFAULT_STORAGE_KEY,
  SessionState,
  type TokenListener,
  type TokenStorage,
  defaultTokenStorage,
} from './session.js';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface HttpOptions {
  /** Origin of the service, e.g. http://127.0.0.1:3000 (paths start with /api). */
  baseUrl: string;
  /** A session JWT (from login, register, verify…) or an API key (wsk_…): both are sent as a bearer credential. */
  token?: string | null;
  /** Defaults to globalThis.fetch. */
  fetch?: FetchLike;
  /** Sent with every request (e.g. a user agent tag). */
  headers?: Record<string, string>;
  /** Passed to fetch; in a browser `include` also sends the `token` cookie. */
  credentials?: RequestCredentials;
  /**
   * Where the session token is kept across page loads: localStorage in
   * browsers and memory elsewhere by default; pass memoryStorage() to keep it
   * out of localStorage, or an adapter of your own.
   */
  storage?: TokenStorage;
  /** The storage key; default `workspace-api.token`. */
  storageKey?: string;
}

/** A non-2xx answer. `code` is the service's stable error code (`http_<status>` when the body had none). */
export class WorkspaceApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body: unknown,
  ) {
    super(message);
    this.name = 'WorkspaceApiError';
  }
}

/**
 * The service could not be reached (refused, unknown host, TLS, offline, CORS
 * refusal in a browser): no HTTP answer at all. `url` is the request's URL;
 * `cause` is what fetch threw.
 */
export class WorkspaceNetworkError extends Error {
  readonly code = 'network_error';
  constructor(
    readonly url: string,
    override readonly cause: unknown,
  ) {
    super(`cannot reach ${url}: ${describeFetchFailure(cause)}`);
    this.name = 'WorkspaceNetworkError';
  }
}

function describeFetchFailure(error: unknown): string {
  const inner = (error as { cause?: { code?: string; message?: string } } | null)?.cause;
  if (inner?.code)
    return `${inner.code}${inner.message && !inner.message.includes(inner.code) ? ` (${inner.message})` : ''}`;
  if (inner?.message) return inner.message;
  return error instanceof Error ? error.message : String(error);
}

const isAbort = (error: unknown) =>
  (error as { name?: string } | null)?.name === 'AbortError' ||
  (error as { name?: string } | null)?.name === 'TimeoutError';

function fillPath(template: string, params: Record<string, unknown> | undefined): string {
  return template.replace(/\{([^}]+)\}/g, (_match, name: string) => {
    const value = params?.[name];
    if (value === undefined || value === null || value === '')
      throw new TypeError(`missing path parameter ${name} for ${template}`);
    return encodeURIComponent(String(value));
  });
}

export function buildQuery(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) for (const item of value) search.append(name, String(item));
    else search.append(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export async function errorFromResponse(response: Response): Promise<WorkspaceApiError> {
  const text = await response.text().catch(() => '');
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text */
  }
  const record = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const code = typeof record.code === 'string' ? record.code : `http_${response.status}`;
  const message =
    typeof record.message === 'string' ? record.message : `${response.status} ${response.statusText}`.trim();
  return new WorkspaceApiError(response.status, code, message, body);
}

export class HttpCore {
  readonly baseUrl: string;
  readonly session: SessionState;
  private readonly fetchImpl: FetchLike;
  private readonly headers: Record<string, string>;
  private readonly credentials: RequestCredentials | undefined;

  constructor(options: HttpOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required, e.g. http://127.0.0.1:3000');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.session = new SessionState(
      options.storage ?? defaultTokenStorage(),
      options.storageKey ?? DEFAULT_STORAGE_KEY,
      options.token,
    );
    const fetchImpl = options.fetch ?? globalThis.fetch;
    if (!fetchImpl) throw new Error('no fetch available: pass options.fetch');
    this.fetchImpl = (input, init) => fetchImpl(input, init);
    this.headers = options.headers ?? {};
    this.credentials = options.credentials;
  }

  /** The credential sent as Authorization: Bearer; setting it stores it and tells the listeners. */
  get token(): string | null {
    return this.session.token;
  }

  set token(value: string | null) {
    this.session.token = value;
  }

  /** Listens for token changes (sign-in, refresh, logout); returns the function that stops listening. */
  onTokenChange(listener: TokenListener): () => void {
    return this.session.onChange(listener);
  }

  /** The absolute URL of a route of the OpenAPI document. */
  url(path: ApiPath, params?: Record<string, unknown>, query?: Record<string, unknown>): string {
    return `${this.baseUrl}${fillPath(path, params)}${buildQuery(query)}`;
  }

  /**
   * Raw fetch with the client's credential and headers; the caller reads the
   * Response (streams use this). `credential: false` sends neither the token
   * nor cookies (a stream opened with a ticket).
   */
  async send(
    url: string,
    init: Omit<RequestInit, 'headers'> & { headers?: Record<string, string>; credential?: boolean } = {},
  ): Promise<Response> {
    const { credential = true, ...rest } = init;
    const headers: Record<string, string> = { accept: 'application/json', ...this.headers, ...rest.headers };
    if (credential && this.token && !Object.keys(headers).some((h) => h.toLowerCase() === 'authorization'))
      headers.authorization = `Bearer ${this.token}`;
    const credentials = credential ? this.credentials : 'omit';
    try {
      return await this.fetchImpl(url, { ...rest, headers, ...(credentials ? { credentials } : {}) });
    } catch (error) {
      // An aborted request stays an AbortError; anything else fetch throws means no answer came.
      if (isAbort(error)) throw error;
      throw new WorkspaceNetworkError(url, error);
    }
  }

  /** Calls a route of the OpenAPI document and returns its typed success body; throws WorkspaceApiError otherwise. */
  async request<P extends ApiPath, M extends MethodOf<P>>(
    method: M,
    path: P,
    parts: RequestParts<Operation<P, M>>,
  ): Promise<SuccessOf<Operation<P, M>>> {
    const { params, query, body, headers, signal } = parts as {
      params?: Record<string, unknown>;
      query?: Record<string, unknown>;
      body?: unknown;
      headers?: Record<string, string>;
      signal?: AbortSignal;
    };
    const init: Omit<RequestInit, 'headers'> & { headers: Record<string, string> } = {
      method: method.toUpperCase(),
      headers: { ...headers },
      signal,
    };
    if (body !== undefined) {
      init.headers['content-type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const response = await this.send(this.url(path, params, query), init);
    if (!response.ok) throw await errorFromResponse(response);
    if (response.status === 204) return undefined as SuccessOf<Operation<P, M>>;
    const text = await response.text();
    return (text ? JSON.parse(text) : undefined) as SuccessOf<Operation<P, M>>;
  }
}
