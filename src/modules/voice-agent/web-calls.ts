// Calls from a browser (DESIGN.md "Calls from a browser and the console"):
// POST /api/calls/web assembles the call of an agent (an object of the
// caller's `agents` store, or an inline agent record) and records it as a
// free `web` session; the browser then opens GET /api/media/web with the
// single-use token of the answer, and the voice runner carries the call like
// any other (same session, turns, tools, record, latency and recording).
//
// Web calls are free test calls: limited in length (WEB_CALL_MAX_SECONDS),
// in number at once per user (WEB_CALL_CONCURRENCY_PER_USER: 429
// `too_many_calls`) and in number per hour (the `webCallsPerUser` rate
// limit: 429 `rate_limited`), never charged.
import type { RateLimitRule, WebCallConfig } from '../../config.js';
import { invalidInput } from '../../http/errors.js';
import type { Timer, TimerClock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { iso } from '../../lib/time.js';
import type { ProgressReporter } from '../../providers/audio/interface.js';
import type { StoreRecords } from '../data/store-records.js';
import type { IntegrationService } from '../integrations/service.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { PersonaService } from '../personas/service.js';
import type { RateLimiter } from '../platform/rate-limiter.js';
import { WEB_AUDIO_FORMAT, type WebAudioFormat } from '../voice/transport.js';
import { type AgentRecord, agentCall, agentDesignInput, parseAgentRecord } from '../calls/agent-calls.js';
import type { CallDesigns } from '../calls/call-design.js';
import { MEDIA_TOKEN_TTL_SECONDS, type MediaTokens } from './media-tokens.js';
import type { CallService } from '../calls/service.js';
import { DEFAULT_PERSONA } from '../calls/session-service.js';
import { mediaStreamUrl } from './media-url.js';
import type { CallStore } from '../calls/store.js';

export const WEB_MEDIA_PATH = '/api/media/web';
/** A set-up call whose browser has not connected this long after its token expired is ended `canceled` (outcome `no_answer`, reason `not_connected`). */
const CONNECT_GRACE_MS = 10_000;

export interface WebCallInput {
  agentId?: string;
  agent?: unknown;
  knowledgeBaseId?: string;
  integrations?: string[];
  personaId?: string;
  /** Replace the agent's pathway: an object of the caller's conversational-pathways store, or a pathway (a document, `{ id }` or `{ name?, steps }`). */
  pathwayId?: string;
  pathway?: unknown;
}

export interface WebCallStarted {
  sessionId: string;
  url: string;
  expiresAt: string;
  audio: WebAudioFormat;
}

export interface WebCallDeps {
  calls: Pick<CallService, 'openWeb' | 'discardWeb'>;
  store: CallStore;
  tokens: MediaTokens;
  secretBox: SecretBox;
  records: Pick<StoreRecords, 'read'>;
  knowledge: Pick<KnowledgeService, 'get'>;
  integrations: Pick<IntegrationService, 'functionsFor'>;
  personas: Pick<PersonaService, 'get'>;
  /** The agent's (or the request's) pathway and the agent's custom tools. */
  designs: Pick<CallDesigns, 'resolve'>;
  limiter: Pick<RateLimiter, 'consume'>;
  rateLimit: RateLimitRule;
  settings: WebCallConfig;
  clock: TimerClock;
  publicUrl: string;
  report: ProgressReporter;
  log: { warn(obj: unknown, msg: string): void };
}

export class WebCalls {
  private readonly expiry = new Map<string, Timer>();

  constructor(private readonly deps: WebCallDeps) {}

  /**
   * Starts a web call for `userId`: 400 for an agent that is missing or
   * unreadable or a custom tool that is not valid, 404 for an agent,
   * knowledge base, integration, persona or pathway that is not theirs, 422
   * `invalid_pathway` for a pathway that is not valid, 429 `too_many_calls`
   * over the concurrency limit, 429 `rate_limited` over the hourly limit
   * (only calls that would start count).
   */
  async start(userId: string, input: WebCallInput): Promise<WebCallStarted> {
    const { calls, store, tokens, secretBox, settings, clock } = this.deps;
    const call = await this.assemble(userId, input);
    const { sessionId } = await calls.openWeb(userId, call, {
      max: settings.concurrencyPerUser,
      connectableSince: clock.now() - MEDIA_TOKEN_TTL_SECONDS * 1000,
    });
    try {
      await this.deps.limiter.consume(`web-calls:user:${userId}`, this.deps.rateLimit);
    } catch (err) {
      await calls.discardWeb(sessionId);
      throw err;
    }
    const { token, expiresAt } = await tokens.issue(userId, sessionId, 'web', MEDIA_TOKEN_TTL_SECONDS);
    await store.saveAssembled(sessionId, secretBox.seal(JSON.stringify(call)), expiresAt);
    this.endIfNeverConnected(sessionId, MEDIA_TOKEN_TTL_SECONDS * 1000 + CONNECT_GRACE_MS);
    const url = new URL(mediaStreamUrl(this.deps.publicUrl, WEB_MEDIA_PATH));
    url.searchParams.set('token', token);
    return { sessionId, url: url.toString(), expiresAt: iso(expiresAt), audio: { ...WEB_AUDIO_FORMAT } };
  }

  /** The browser connected (its token was accepted): the call no longer waits to be ended for want of it. */
  connected(sessionId: string): void {
    this.expiry.get(sessionId)?.cancel();
    this.expiry.delete(sessionId);
  }

  /** Stops the timers (the app is closing); calls left set up end by housekeeping. */
  close(): void {
    for (const timer of this.expiry.values()) timer.cancel();
    this.expiry.clear();
  }

  private endIfNeverConnected(sessionId: string, afterMs: number): void {
    const timer = this.deps.clock.setTimeout(() => {
      this.expiry.delete(sessionId);
      void (async () => {
        const session = await this.deps.store.findSession(sessionId);
        if (!session || session.media_instance || session.status !== 'created') return;
        await this.deps.store.setOutcome(sessionId, 'no_answer', 'not_connected');
        await this.deps.report(sessionId, `web_${sessionId}_not_connected`, {
          status: 'canceled',
          at: iso(this.deps.clock.now()),
          outcome: 'no_answer',
          reason: 'not_connected',
        });
      })().catch((err: unknown) =>
        this.deps.log.warn({ err, sessionId }, 'ending a web call that never connected failed'),
      );
    }, afterMs);
    this.expiry.set(sessionId, timer);
  }

  /** The agent (stored or inline) with the request's overrides, assembled as a call (DESIGN "Voice agent": agent records); agent tests assemble theirs here too. */
  async assemble(userId: string, input: WebCallInput) {
    const { records, knowledge, integrations, personas, designs, settings } = this.deps;
    if ((input.agentId === undefined) === (input.agent === undefined))
      throw invalidInput('send exactly one of agentId (an object of your agents store) and agent (an agent record)');
    let agent: AgentRecord | null;
    if (input.agentId !== undefined) {
      const plain = await records.read(userId, 'agents', input.agentId);
      try {
        agent = parseAgentRecord(JSON.parse(plain.toString('utf8')));
      } catch {
        agent = null;
      }
      if (!agent) throw invalidInput(`agent ${input.agentId} is not an agent record: JSON with at least a name`);
      agent.id = input.agentId;
    } else {
      agent = parseAgentRecord(input.agent);
      if (!agent) throw invalidInput('agent must be an agent record: an object with at least a name');
    }
    const knowledgeBaseId = input.knowledgeBaseId ?? agent.knowledgeBaseId;
    // A knowledge base, integration or persona that is not the caller's is 404, as for POST /api/session/call.
    if (knowledgeBaseId) await knowledge.get(userId, knowledgeBaseId);
    const integrationIds = [...new Set(input.integrations ?? agent.integrations ?? [])];
    const tools = (await integrations.functionsFor(userId, integrationIds)).map((fn) => ({
      name: fn.name,
      description: fn.description,
      parameters: fn.parameters,
    }));
    const persona = await personas.get(input.personaId ?? agent.personaId ?? DEFAULT_PERSONA);
    const override = {
      ...(input.pathway !== undefined ? { pathway: input.pathway } : {}),
      ...(input.pathwayId !== undefined ? { pathwayId: input.pathwayId } : {}),
    };
    const design = await designs.resolve(
      userId,
      agentDesignInput(agent, input.agent !== undefined ? 'agent.tools' : 'tools', override),
    );
    return agentCall(agent, {
      design,
      now: this.deps.clock.now(),
      persona,
      tools,
      situation: 'talking with someone who calls you from a web browser to try you out',
      to: '',
      from: null,
      contactName: 'web caller',
      knowledgeBaseId,
      integrationIds,
      humans: [],
      maxDurationSeconds: settings.maxSeconds,
    });
  }
}
