// Calls to the service's numbers (DESIGN.md "Voice agent"): Twilio posts the
// number's voice webhook; once its signature checks, the number's inbound
// configuration says who answers. The agent and human agents are records in
// the owner's `agents` and `contacts` stores, opened with the store's key.
// The answer is TwiML: a media stream to the voice agent, or, for a number
// not attached, an owner without money or at the concurrency limit, one
// spoken sentence and a hang-up, with the session recorded `failed`
// (outcome `refused`) and its reason.
import { AppError, notFound } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import { iso } from '../../lib/time.js';
import {
  type AssembledCall,
  type CallTool,
  FINAL_STATUSES,
  type ProgressReporter,
} from '../../providers/audio/interface.js';
import type { TelephonyProviders } from '../../providers/telephony/interface.js';
import { type SignedParams, formValue, verifyTwilioCallback } from '../../providers/telephony/twilio-signature.js';
import type { StoreRecords } from '../data/store-records.js';
import type { SingleUseTokens } from '../platform/single-use.js';
import type { IntegrationService } from '../integrations/service.js';
import type { PersonaService } from '../personas/service.js';
import type { InboundRoute } from '../telephony/inbound-service.js';
import { type AgentRecord, agentCall, agentDesignInput, parseAgentRecord } from '../calls/agent-calls.js';
import type { CallDesign, CallDesigns } from '../calls/call-design.js';
import { MEDIA_TOKEN_TTL_SECONDS, type MediaTokens } from './media-tokens.js';
import type { CallService } from '../calls/service.js';
import { DEFAULT_PERSONA } from '../calls/session-service.js';
import { connectStreamTwiml, hangUpTwiml, sayAndHangUpTwiml } from '../../providers/telephony/twiml.js';
import { mediaStreamUrl } from './media-url.js';
import { TWILIO_MEDIA_PATH } from './carrier.js';
import type { CallStore } from '../calls/store.js';

const REFUSALS: Record<string, string> = {
  not_attached: 'Sorry, this number is not taking calls right now. Goodbye.',
  number_suspended: 'Sorry, this number is not taking calls right now. Goodbye.',
  agent_unreadable: 'Sorry, nobody can take your call right now. Please try again later. Goodbye.',
  insufficient_funds: 'Sorry, this line cannot take calls right now. Goodbye.',
  concurrency_limit: 'Sorry, all our lines are busy. Please call again in a few minutes. Goodbye.',
  unsupported_destination: 'Sorry, this number is not taking calls right now. Goodbye.',
};

export interface InboundCallDeps {
  providers: TelephonyProviders;
  publicUrl: string;
  clock: Clock;
  route(numberId: string): Promise<InboundRoute | null>;
  records: StoreRecords;
  personas: Pick<PersonaService, 'get'>;
  /** The agent's pathway and custom tools. */
  designs: Pick<CallDesigns, 'resolve'>;
  integrations: Pick<IntegrationService, 'functionsFor'>;
  calls: Pick<CallService, 'openInbound'>;
  store: CallStore;
  tokens: MediaTokens;
  singleUse: Pick<SingleUseTokens, 'spend'>;
  secretBox: SecretBox;
  report: ProgressReporter;
}

/** How long a CallSid is remembered as answered (Twilio retries within seconds; a replayed signed webhook stays refused a day). */
const CALL_SID_MEMORY_MS = 24 * 3600_000;

const text = (v: unknown, max: number): string | undefined =>
  typeof v === 'string' && v.trim() ? v.slice(0, max) : undefined;

export class InboundCalls {
  constructor(private readonly deps: InboundCallDeps) {}

  /** POST /api/webhooks/twilio/voice/{numberId} → the TwiML to answer with. */
  async answer(
    numberId: string,
    requestUri: string,
    signature: string | undefined,
    params: SignedParams,
  ): Promise<string> {
    const signer = verifyTwilioCallback(this.deps.providers.list, signature, this.deps.publicUrl + requestUri, params);
    const route = await this.deps.route(numberId);
    if (!route || route.number.provider !== signer.slug) throw notFound('phone number');
    const callSid = formValue(params, 'CallSid') ?? '';
    const caller = formValue(params, 'From') ?? 'unknown';
    // Twilio retries a webhook it got no answer to, and a signed one can be replayed: one CallSid opens one session.
    const now = this.deps.clock.now();
    if (callSid && !(await this.deps.singleUse.spend('inbound-call', [numberId, callSid], now + CALL_SID_MEMORY_MS)))
      return this.answerAgain(route.userId, callSid, now);
    const assembled = await this.assemble(route, caller);
    const refusalOf = assembled.refusal ?? (route.number.status !== 'active' ? 'number_suspended' : null);
    const call = assembled.call ?? this.placeholderCall(route, caller);
    const opened = await this.deps.calls.openInbound(route.userId, call, callSid, { refused: refusalOf !== null });
    const reason = refusalOf ?? opened.refusal?.reason ?? null;
    if (reason) {
      await this.deps.store.setOutcome(opened.sessionId, 'refused', reason);
      await this.deps.report(opened.sessionId, `inbound_${opened.sessionId}_refused`, {
        status: 'failed',
        at: iso(this.deps.clock.now()),
        outcome: 'refused',
        reason,
      });
      return sayAndHangUpTwiml(REFUSALS[reason] ?? REFUSALS.not_attached!);
    }
    const { token, expiresAt } = await this.deps.tokens.issue(
      route.userId,
      opened.sessionId,
      'twilio',
      MEDIA_TOKEN_TTL_SECONDS,
    );
    await this.deps.store.saveAssembled(
      opened.sessionId,
      this.deps.secretBox.seal(JSON.stringify(opened.call)),
      expiresAt,
    );
    return connectStreamTwiml(mediaStreamUrl(this.deps.publicUrl, TWILIO_MEDIA_PATH), { token });
  }

  /**
   * The webhook of a call answered before (a retry or a replay): the same
   * refusal, or a fresh media token for the same session while its stream
   * has not connected (the first answer may never have reached Twilio); no
   * second session, no second hold.
   */
  private async answerAgain(userId: string, callSid: string, now: number): Promise<string> {
    const { store, tokens } = this.deps;
    // The first request may still be opening the session, or deciding it: wait until it is refused, assembled or over.
    let session: Awaited<ReturnType<CallStore['findSession']>>;
    for (let attempt = 0; attempt < 30; attempt++) {
      const sessionId = await store.findByProviderCall(userId, callSid, now - CALL_SID_MEMORY_MS);
      session = sessionId ? await store.findSession(sessionId) : undefined;
      const decided =
        session &&
        (session.outcome === 'refused' ||
          session.assembled ||
          (FINAL_STATUSES as readonly string[]).includes(session.status));
      if (decided) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!session) return sayAndHangUpTwiml(REFUSALS.agent_unreadable!);
    if (session.outcome === 'refused')
      return sayAndHangUpTwiml(REFUSALS[session.reason ?? ''] ?? REFUSALS.not_attached!);
    if (
      session.assembled &&
      !session.media_instance &&
      !(FINAL_STATUSES as readonly string[]).includes(session.status)
    ) {
      const { token } = await tokens.issue(userId, session.id, 'twilio', MEDIA_TOKEN_TTL_SECONDS);
      return connectStreamTwiml(mediaStreamUrl(this.deps.publicUrl, TWILIO_MEDIA_PATH), { token });
    }
    return hangUpTwiml();
  }

  /** The call its configuration describes, or why there is none. */
  private async assemble(
    route: InboundRoute,
    caller: string,
  ): Promise<{ call: AssembledCall | null; refusal: string | null }> {
    const configuration = route.configuration;
    if (!configuration) return { call: null, refusal: 'not_attached' };
    const { records, personas, integrations } = this.deps;
    let agent: AgentRecord | null;
    try {
      agent = parseAgentRecord(
        JSON.parse((await records.read(route.userId, 'agents', configuration.agent.id)).toString('utf8')),
      );
    } catch (err) {
      if (!(err instanceof AppError) && !(err instanceof SyntaxError)) throw err;
      agent = null;
    }
    if (!agent) return { call: null, refusal: 'agent_unreadable' };
    agent.id = configuration.agent.id;
    // A pathway that is not theirs or not valid, a custom tool that is not: the agent cannot run, as if unreadable.
    let design: CallDesign;
    try {
      design = await this.deps.designs.resolve(route.userId, agentDesignInput(agent, 'tools'));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { call: null, refusal: 'agent_unreadable' };
    }
    const humans: Array<{ id: string; name: string; phone: string }> = [];
    for (const ref of configuration.humanAgents) {
      const contact = await records.read(route.userId, 'contacts', ref.id).then(
        (b) => JSON.parse(b.toString('utf8')) as { name?: unknown; phone?: unknown; phoneNumber?: unknown },
        () => null,
      );
      const phone = text(contact?.phone, 20) ?? text(contact?.phoneNumber, 20);
      if (contact && phone && /^\+[1-9]\d{6,14}$/.test(phone))
        humans.push({ id: ref.id, name: text(contact.name, 200) ?? 'a colleague', phone });
    }
    const persona = await personas.get(agent.personaId ?? DEFAULT_PERSONA).catch(() => personas.get(DEFAULT_PERSONA));
    const knowledgeBaseId = configuration.knowledge_base_id ?? agent.knowledgeBaseId;
    const integrationIds = agent.integrations ?? [];
    const tools: CallTool[] = (await integrations.functionsFor(route.userId, integrationIds).catch(() => [])).map(
      (fn) => ({ name: fn.name, description: fn.description, parameters: fn.parameters }),
    );
    const call = agentCall(agent, {
      design,
      now: this.deps.clock.now(),
      contactPhone: caller,
      persona,
      tools,
      situation: `answering calls to ${route.number.name}`,
      to: route.number.phoneNumber,
      from: caller,
      contactName: caller,
      knowledgeBaseId,
      integrationIds,
      humans,
    });
    return { call, refusal: null };
  }

  /** What a refused call is recorded as (no agent could be read). */
  private placeholderCall(route: InboundRoute, caller: string): AssembledCall {
    return {
      to: route.number.phoneNumber,
      from: caller,
      agent: { name: 'none' },
      contact: { name: caller },
      systemPrompt: '',
      firstMessage: '',
      voice: { provider: 'local', voiceId: 'en-us' },
      tools: [],
    };
  }
}
