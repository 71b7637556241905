// Custom HTTP tools: declaring them (checked, URL filtered, header values
// sealed) and using them during a call. A use never throws for what the
// customer's endpoint does: invalid arguments, a refused address, a timeout,
// an error status, an answer too large or not JSON are all a tool error the
// model (or the sandbox engine) answers. Only an abort of the caller's signal
// (barge-in, hang-up) throws, as the built-in tools do.
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { OutboundHttpError } from '../../lib/outbound-http.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { signWebhook } from '../../lib/standard-webhooks.js';
import type { WebhookService } from '../webhooks/service.js';
import { type DeclaredHttpTool, parseHttpTools } from './declaration.js';
import { type SealedHeaders, maskHeaders, openHeaders, sealHeaders } from './headers.js';
import { parseJsonPath, readJsonPath } from './json-path.js';
import { ParameterSchemas } from './parameters.js';
import { type ToolCallInfo, type ToolRequest, MAX_GET_URL_LENGTH, buildToolRequest } from './request.js';
import { MAX_ANSWER_BYTES, type SendToolRequest, type ToolAnswer } from './send.js';

/** A declared tool as a call holds it: plain JSON (it may be stored with the call), header values sealed. */
export interface HttpTool extends Omit<DeclaredHttpTool, 'headers'> {
  headers: SealedHeaders;
}

/** A tool as any answer shows it: header values `****`. */
export interface HttpToolView extends Omit<DeclaredHttpTool, 'headers'> {
  headers: Record<string, '****'>;
}

export type ToolOutcome =
  | { ok: true; result: unknown; assigned: Record<string, unknown>; ms: number }
  | { ok: false; error: string; ms: number };

/** A second attempt after a 5xx or a failed connection starts only with at least this much of the deadline left. */
export const MIN_RETRY_MS = 500;
/** Arguments (the model's JSON) past this are refused before they are validated. */
export const MAX_ARGUMENTS_BYTES = 16 * 1024;
/** After this long the session says the tool's `speak` line (the session keeps the time; this is its figure). */
export const SPEAK_AFTER_MS = 1000;
/** A pathway webhook node's budget (DESIGN.md: 5 s). */
export const WEBHOOK_NODE_TIMEOUT_MS = 5000;

export interface CustomToolDeps {
  /** The account's webhook secret and address filter: tools are signed and filtered as webhooks are. */
  webhooks: Pick<WebhookService, 'ensureSecret' | 'signingSecrets' | 'checkUrl'>;
  secretBox: SecretBox;
  send: SendToolRequest;
  clock: Clock;
  log?: { warn(obj: unknown, msg: string): void };
}

type Attempt = { answer: ToolAnswer } | { failure: OutboundHttpError };

export class CustomToolService {
  private readonly schemas = new ParameterSchemas();

  constructor(private readonly deps: CustomToolDeps) {}

  /**
   * The tools a record, payload or node declares (`path` names the list in
   * its document, such as `tools` or `nodes[2].tools`), checked, or a 400
   * `invalid_input` naming the first problem. `taken`: the call's other tool
   * names (built-in tools), which a custom tool may not reuse.
   */
  declare(input: unknown, path: string, taken: Iterable<string> = []): HttpTool[] {
    return parseHttpTools(input, path, this.schemas, taken).map((tool, index) => {
      try {
        this.deps.webhooks.checkUrl(tool.url);
      } catch (err) {
        throw Object.assign(err as Error, { message: `${path}[${index}].url: ${(err as Error).message}` });
      }
      return { ...tool, headers: sealHeaders(this.deps.secretBox, tool.headers) };
    });
  }

  /**
   * A pathway webhook node's URL, judged when a call names the pathway as a
   * tool's is (`path` names it in the message): a 400 for one that can never
   * be sent (a private address in production). Names are judged again at the request.
   */
  checkWebhookNode(url: string, path: string): void {
    try {
      this.deps.webhooks.checkUrl(url);
    } catch (err) {
      throw Object.assign(err as Error, { message: `${path}: ${(err as Error).message}` });
    }
  }

  /** The tool as every answer (a call's record, an agent shown back) shows it. */
  view(tool: HttpTool): HttpToolView {
    return { ...tool, headers: maskHeaders(tool.headers) };
  }

  /**
   * Uses `tool` for `userId`'s call: the arguments checked against its
   * parameters (no request when they do not match), then one signed request,
   * retried once after a 5xx or a failed connection if at least MIN_RETRY_MS
   * of the tool's timeoutMs is left (the same webhook-id, so the receiver can
   * tell a retry). The JSON answer is the result; `assign` picks variables
   * from it. Throws only when `signal` aborts.
   */
  async invoke(
    userId: string,
    tool: HttpTool,
    args: unknown,
    call: ToolCallInfo,
    variables: Record<string, unknown>,
    options: { signal?: AbortSignal } = {},
  ): Promise<ToolOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const fail = (error: string): ToolOutcome => ({ ok: false, error, ms: elapsed() });
    options.signal?.throwIfAborted();

    // Bounded before validation: a customer's `pattern` runs on them, and they travel in the request.
    if (Buffer.byteLength(JSON.stringify(args) ?? '') > MAX_ARGUMENTS_BYTES)
      return fail(`invalid arguments: larger than ${MAX_ARGUMENTS_BYTES / 1024} KB`);
    const argumentProblem = this.schemas.argumentProblem(tool.parameters, args);
    if (argumentProblem) return fail(`invalid arguments: ${argumentProblem}`);
    try {
      this.deps.webhooks.checkUrl(tool.url);
    } catch (err) {
      return fail(`the tool's address was refused: ${(err as Error).message}`);
    }
    const request = buildToolRequest(tool, args as Record<string, unknown>, call, variables);
    if (request.url.length > MAX_GET_URL_LENGTH)
      return fail(`the GET request is longer than ${MAX_GET_URL_LENGTH} characters (declare the tool with POST)`);

    const sent = await this.deliver(userId, request, tool.timeoutMs, tool.headers, started, options.signal, tool.name);
    if ('error' in sent) return fail(sent.error);
    return this.outcome(tool, sent.attempt, sent.tries, elapsed());
  }

  /**
   * A pathway's webhook node (DESIGN.md "Conversational pathways"): POST its
   * filled `body` as it is (none: `{ call, variables }`), or GET with `_call`
   * holding `{ call, variables }`; signed, filtered, bounded and retried as a
   * tool's request, within WEBHOOK_NODE_TIMEOUT_MS. Throws only when `signal` aborts.
   */
  async callWebhook(
    userId: string,
    node: { url: string; method: 'POST' | 'GET'; body?: string },
    call: ToolCallInfo,
    variables: Record<string, unknown>,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<{ ok: true; result: unknown; ms: number } | { ok: false; error: string; ms: number }> {
    const started = performance.now();
    const timeoutMs = options.timeoutMs ?? WEBHOOK_NODE_TIMEOUT_MS;
    const elapsed = () => Math.round(performance.now() - started);
    options.signal?.throwIfAborted();
    try {
      this.deps.webhooks.checkUrl(node.url);
    } catch (err) {
      return { ok: false, error: `the webhook's address was refused: ${(err as Error).message}`, ms: elapsed() };
    }
    const request =
      node.method === 'POST' && node.body !== undefined
        ? { url: node.url, method: 'POST' as const, body: node.body, signedPayload: node.body }
        : buildToolRequest({ url: node.url, method: node.method }, {}, call, variables);
    const sent = await this.deliver(userId, request, timeoutMs, {}, started, options.signal, 'webhook node');
    if ('error' in sent) return { ok: false, error: sent.error, ms: elapsed() };
    const outcome = this.outcome({ timeoutMs, assign: {} }, sent.attempt, sent.tries, elapsed());
    return outcome.ok ? { ok: true, result: outcome.result, ms: outcome.ms } : outcome;
  }

  /** One signed request, retried once after a 5xx or a failed connection while MIN_RETRY_MS of the budget is left. */
  private async deliver(
    userId: string,
    request: ToolRequest,
    timeoutMs: number,
    sealedHeaders: SealedHeaders,
    started: number,
    callerSignal: AbortSignal | undefined,
    what: string,
  ): Promise<{ attempt: Attempt; tries: number } | { error: string }> {
    const elapsed = () => Math.round(performance.now() - started);
    const deadline = AbortSignal.timeout(Math.max(1, timeoutMs - elapsed()));
    const signal = callerSignal ? AbortSignal.any([callerSignal, deadline]) : deadline;
    const messageId = `msg_${newId(this.deps.clock.now()).replace(/-/g, '')}`;
    let attempt: Attempt | null = null;
    let tries = 0;
    try {
      await this.deps.webhooks.ensureSecret(userId);
      const secrets = await this.deps.webhooks.signingSecrets(userId);
      // Lower-cased so a customer's `Accept` cannot sit beside ours; the server's own headers win.
      const customHeaders = Object.fromEntries(
        Object.entries(openHeaders(this.deps.secretBox, sealedHeaders)).map(([name, value]) => [
          name.toLowerCase(),
          value,
        ]),
      );
      for (;;) {
        tries += 1;
        const headers = {
          ...customHeaders,
          ...signWebhook(secrets, messageId, this.deps.clock.now(), request.signedPayload),
        };
        try {
          attempt = { answer: await this.deps.send(request, headers, signal) };
        } catch (err) {
          if (!(err instanceof OutboundHttpError)) throw err;
          attempt = { failure: err };
        }
        const retryable = 'answer' in attempt ? attempt.answer.status >= 500 : attempt.failure.reason === 'network';
        if (tries >= 2 || !retryable || timeoutMs - elapsed() < MIN_RETRY_MS) break;
      }
    } catch (err) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      if (deadline.aborted) return { error: `timed out after ${timeoutMs} ms` };
      // The secret's lookup or opening failed: ours to look into, not the customer's.
      this.deps.log?.warn({ err, tool: what }, 'custom tool: the request could not be made');
      return { error: 'the tool could not be used (internal error)' };
    }
    return { attempt: attempt!, tries };
  }

  private outcome(
    tool: Pick<HttpTool, 'timeoutMs' | 'assign'>,
    attempt: Attempt,
    tries: number,
    ms: number,
  ): ToolOutcome {
    const afterRetry = tries > 1 ? ' (after a retry)' : '';
    if ('failure' in attempt) {
      const { reason, message } = attempt.failure;
      const error =
        reason === 'timeout'
          ? `timed out after ${tool.timeoutMs} ms`
          : reason === 'too_large'
            ? `the answer is larger than ${MAX_ANSWER_BYTES / 1024} KB`
            : reason === 'blocked_address'
              ? `the tool's address was refused: ${message}`
              : message;
      return { ok: false, error: error + afterRetry, ms };
    }
    const { status, body } = attempt.answer;
    if (status >= 300 && status < 400) return { ok: false, error: `HTTP ${status} (redirects are not followed)`, ms };
    if (status < 200 || status > 299) return { ok: false, error: `HTTP ${status}${afterRetry}`, ms };
    let result: unknown = null;
    if (body.length > 0) {
      try {
        result = JSON.parse(body.toString('utf8'));
      } catch {
        return { ok: false, error: 'the answer is not JSON', ms };
      }
    }
    return { ok: true, result, assigned: assignedFrom(tool.assign, result), ms };
  }
}

/** The variables `assign` names, from the answer; a path that finds nothing assigns nothing. */
export function assignedFrom(assign: Readonly<Record<string, string>>, result: unknown): Record<string, unknown> {
  const assigned: Record<string, unknown> = {};
  for (const [variable, path] of Object.entries(assign)) {
    const steps = parseJsonPath(path);
    if (typeof steps === 'string') continue;
    const value = readJsonPath(result, steps);
    if (value !== undefined) assigned[variable] = value;
  }
  return assigned;
}
