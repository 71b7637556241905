// POST /api/session/call (spec 4.14, DESIGN "Calls"): a payload signed by the
// caller's registered server is verified by the one signed-payload verifier,
// its content checked, everything it references checked to be the caller's,
// and the call assembled (system prompt, the persona's voice, knowledge search
// and integration functions as tools with JSON schemas, the pathway, custom
// tools and variables it names: call-design.ts) and handed to CallService.start.
import { AppError, invalidInput } from '../../http/errors.js';
import type { Clock } from '../../lib/clock.js';
import type { AssembledCall, CallTool } from '../../providers/audio/interface.js';
import type { SandboxScript } from '../../providers/telephony/interface.js';
import type { SignedPayloads } from '../data/signed-payloads.js';
import type { IntegrationService } from '../integrations/service.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { PersonaService } from '../personas/service.js';
import type { PhoneNumberService } from '../telephony/numbers-service.js';
import type { WebhookService } from '../webhooks/service.js';
import {
  type CallDesigns,
  type CallVariables,
  type CheckedDesign,
  CallTemplates,
  designedCallFields,
  parseCallVariables,
  pathwayPrompt,
} from './call-design.js';
import { type AnalysisSettings, parseAnalysisSettings } from '../analysis/settings.js';
import type { CallService } from './service.js';

/** The `use` claim of a call-session payload. */
export const CALL_SESSION_USE = 'call-session';
/** The persona used when the agent names none. */
export const DEFAULT_PERSONA = 'local-amy';
const E164 = /^\+[1-9]\d{6,14}$/;
const MAX_TEXT = 20_000;

export interface CallPayload {
  agent: {
    name: string;
    personaId?: string;
    instructions?: string;
    firstMessage?: string;
    voicemailMessage?: string;
    analysis?: AnalysisSettings;
  };
  contact: { name: string; phone: string; fields?: Record<string, string> };
  humanAgents?: Array<{ name: string; phone: string }>;
  type: 'pathway' | 'prompt';
  /** As sent: a pathway document, `{ id }` of the conversational-pathways store, or the old `{ name?, steps }` (call-design.ts checks it). */
  pathway?: Record<string, unknown>;
  prompt?: string;
  variables?: CallVariables;
  /** Custom HTTP tools as sent (call-design.ts declares them). */
  tools?: unknown[];
  knowledgeBase?: { id: string };
  integrations?: string[];
  phoneNumberId?: string;
  webhook?: string;
}

export interface CallSessionDeps {
  signedPayloads: SignedPayloads;
  calls: CallService;
  numbers: PhoneNumberService;
  knowledge: KnowledgeService;
  integrations: IntegrationService;
  personas: PersonaService;
  webhooks: Pick<WebhookService, 'checkUrl'>;
  /** The pathway, custom tools and variables a payload names. */
  designs: CallDesigns;
  /** `{{now}}` in the agent's texts. */
  clock: Clock;
  /** Whether a human agent's phone can be dialled by a transfer (priced for outbound calls; transfers.ts). Absent: not checked. */
  dialable?: (phone: string) => boolean;
}

export class CallSessionService {
  constructor(private readonly deps: CallSessionDeps) {}

  /** Verifies the signed payload, assembles the call and starts it → its session id. */
  async startSigned(
    userId: string,
    input: { jwt: string; server: string; script?: SandboxScript },
  ): Promise<{ sessionId: string }> {
    let payload: CallPayload | null = null;
    let checked: CheckedDesign | null = null;
    await this.deps.signedPayloads.verify(userId, input.server, input.jwt, {
      use: CALL_SESSION_USE,
      useOptional: true,
      validate: (claims) => {
        const parsed = parseCallPayload(claims);
        if (parsed.webhook !== undefined) this.deps.webhooks.checkUrl(parsed.webhook);
        // A human agent the transfer could never dial is refused now, as an unpriced contact is, before the jti is spent.
        const undialable = parsed.humanAgents?.find((h) => this.deps.dialable && !this.deps.dialable(h.phone));
        if (undialable)
          throw new AppError(
            'unsupported_destination',
            `human agent ${undialable.name} (${undialable.phone}) cannot be called: calls to that number are not offered (GET /api/pricing/voice-countries lists the countries)`,
          );
        // An inline pathway or old list that is invalid (422), a tool that is not (400): refused before the jti is spent.
        checked = this.deps.designs.check(designInput(parsed));
        payload = parsed;
      },
    });
    // A pathway named by id is read now: 404 or 422 after the jti is spent.
    const call = await this.assemble(userId, payload!, undefined, checked!);
    // Only the sandbox carrier acts on it (VoiceAgentCarrier passes it on; Twilio and audio servers never see it).
    if (input.script) call.sandboxScript = input.script;
    else {
      // The contact's own script (DESIGN.md "Campaigns": fields.sandboxScript, its lines one a line), as a campaign contact's.
      const lines = payload!.contact.fields?.sandboxScript?.split('\n').filter((l) => l.trim() !== '');
      if (lines?.length) call.sandboxScript = lines.slice(0, 50);
    }
    return this.deps.calls.start(userId, call, payload!.webhook ?? null);
  }

  /** The call a payload describes; `checked`: what startSigned's check found of its design already. */
  async assemble(
    userId: string,
    payload: CallPayload,
    fromOverride?: string,
    checked?: CheckedDesign,
  ): Promise<AssembledCall> {
    const { knowledge, integrations, personas } = this.deps;
    // A number, knowledge base, integration or pathway that is not the caller's is 404 not_found.
    const from = fromOverride ?? (await this.callerNumber(userId, payload.phoneNumberId));
    const design = await this.deps.designs.resolve(userId, designInput(payload), checked);
    const templates = new CallTemplates({
      variables: payload.variables ?? {},
      contact: payload.contact,
      now: this.deps.clock.now(),
    });
    const agent = {
      ...payload.agent,
      instructions: templates.fill(payload.agent.instructions),
      firstMessage: templates.fill(payload.agent.firstMessage),
      voicemailMessage: templates.fill(payload.agent.voicemailMessage),
    };
    const prompt = templates.fill(payload.prompt);
    const pathwayPart = pathwayPrompt(design.pathway, templates, { named: true });
    const persona = await personas.get(payload.agent.personaId ?? DEFAULT_PERSONA);
    const tools: CallTool[] = [];
    if (payload.knowledgeBase) {
      const base = await knowledge.get(userId, payload.knowledgeBase.id);
      tools.push({
        name: 'search_knowledge',
        description: `Search the knowledge base "${base.name}" for facts to answer the contact.`,
        parameters: {
          type: 'object',
          properties: { query: { type: 'string', description: 'What to look up' } },
          required: ['query'],
          additionalProperties: false,
        },
      });
    }
    for (const fn of await integrations.functionsFor(userId, payload.integrations ?? [])) {
      tools.push({ name: fn.name, description: fn.description, parameters: fn.parameters });
    }
    return {
      to: payload.contact.phone,
      from,
      agent: { name: payload.agent.name, ...(payload.agent.analysis ? { analysis: payload.agent.analysis } : {}) },
      contact: { name: payload.contact.name },
      systemPrompt: systemPrompt({ ...payload, agent, prompt }, pathwayPart, persona.instructions),
      firstMessage: agent.firstMessage || `Hello ${payload.contact.name}, this is ${payload.agent.name}.`,
      voice: { provider: persona.settings.type, voiceId: persona.settings.voiceId },
      tools,
      // What the built-in voice agent's tools act on; an external audio server ignores it.
      context: {
        ...(payload.knowledgeBase ? { knowledgeBaseId: payload.knowledgeBase.id } : {}),
        ...(payload.integrations?.length ? { integrationIds: payload.integrations } : {}),
        ...(payload.humanAgents?.length
          ? { humanAgents: payload.humanAgents.map((h, i) => ({ id: `human-${i + 1}`, name: h.name, phone: h.phone })) }
          : {}),
        ...(agent.voicemailMessage ? { voicemailMessage: agent.voicemailMessage } : {}),
      },
      ...designedCallFields(design, {
        variables: payload.variables,
        contactFields: payload.contact.fields,
        warnings: templates.warnings(),
      }),
    };
  }

  /** The caller's voice-capable active number: the one named, else their first; none is 409. */
  private async callerNumber(userId: string, phoneNumberId: string | undefined): Promise<string> {
    const { numbers } = this.deps;
    if (phoneNumberId !== undefined) {
      const n = await numbers.get(userId, phoneNumberId);
      if (!n.capabilities.voice || n.status !== 'active')
        throw new AppError('conflict', `phone number ${phoneNumberId} cannot place voice calls`);
      return n.phoneNumber;
    }
    const first = (await numbers.list(userId)).find((n) => n.capabilities.voice && n.status === 'active');
    if (!first)
      throw new AppError(
        'conflict',
        'you have no voice-capable phone number to call from: buy one (POST /api/phone-numbers)',
      );
    return first.phoneNumber;
  }
}

/** What call-design.ts checks of a payload. */
const designInput = (p: CallPayload) => ({ pathway: p.pathway, tools: p.tools, variables: p.variables });

/** `p` with its texts filled in already; `pathwayPart` the pathway's part (pathwayPrompt). */
function systemPrompt(p: CallPayload, pathwayPart: string | null, personaInstructions: string): string {
  const parts = [personaInstructions, `You are ${p.agent.name}, calling ${p.contact.name}.`];
  if (p.agent.instructions) parts.push(p.agent.instructions);
  if (p.type === 'prompt' && p.prompt) parts.push(p.prompt);
  if (pathwayPart) parts.push(pathwayPart);
  // fields.sandboxScript describes the sandbox callee (what it will say), not the contact.
  const fields = Object.entries(p.contact.fields ?? {}).filter(([k]) => k !== 'sandboxScript');
  if (fields.length)
    parts.push(`What you know about ${p.contact.name}:\n${fields.map(([k, v]) => `- ${k}: ${v}`).join('\n')}`);
  if (p.humanAgents?.length)
    parts.push(
      `If the contact asks for a person, these colleagues can be conferenced in: ${p.humanAgents.map((h) => h.name).join(', ')}.`,
    );
  return parts.join('\n\n');
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown, what: string, max = MAX_TEXT): string => {
  if (typeof v !== 'string' || v.trim().length === 0 || v.length > max)
    throw invalidInput(`${what} must be a non-empty string of at most ${max} characters`);
  return v;
};
const optText = (v: unknown, what: string, max = MAX_TEXT) => (v === undefined ? undefined : text(v, what, max));
const phone = (v: unknown, what: string) => {
  if (typeof v !== 'string' || !E164.test(v)) throw invalidInput(`${what} must be an E.164 number`);
  return v;
};

/** Checks the claims of a call-session payload (400 invalid_input; the jti is then not used). */
export function parseCallPayload(c: Record<string, unknown>): CallPayload {
  if (!isObject(c.agent)) throw invalidInput('agent must be an object');
  if (!isObject(c.contact)) throw invalidInput('contact must be an object');
  const agent: CallPayload['agent'] = { name: text(c.agent.name, 'agent.name', 200) };
  const personaId = optText(c.agent.personaId, 'agent.personaId', 200);
  if (personaId) agent.personaId = personaId;
  const instructions = optText(c.agent.instructions, 'agent.instructions');
  if (instructions) agent.instructions = instructions;
  const firstMessage = optText(c.agent.firstMessage, 'agent.firstMessage', 2000);
  if (firstMessage) agent.firstMessage = firstMessage;
  const voicemailMessage = optText(c.agent.voicemailMessage, 'agent.voicemailMessage', 2000);
  if (voicemailMessage) agent.voicemailMessage = voicemailMessage;
  if (c.agent.analysis !== undefined) agent.analysis = parseAnalysisSettings(c.agent.analysis);
  const contact: CallPayload['contact'] = {
    name: text(c.contact.name, 'contact.name', 200),
    phone: phone(c.contact.phone, 'contact.phone'),
  };
  if (c.contact.fields !== undefined) {
    if (!isObject(c.contact.fields) || Object.keys(c.contact.fields).length > 100)
      throw invalidInput('contact.fields must be an object of at most 100 strings');
    contact.fields = Object.fromEntries(
      Object.entries(c.contact.fields).map(([k, v]) => [
        text(k, 'contact.fields key', 100),
        text(v, `contact.fields.${k}`, 2000),
      ]),
    );
  }
  const out: CallPayload = { agent, contact, type: 'prompt' };
  if (c.humanAgents !== undefined) {
    if (!Array.isArray(c.humanAgents) || c.humanAgents.length > 10)
      throw invalidInput('humanAgents must be a list of at most 10 { name, phone }');
    out.humanAgents = c.humanAgents.map((h, i) => {
      if (!isObject(h)) throw invalidInput(`humanAgents[${i}] must be an object`);
      return { name: text(h.name, `humanAgents[${i}].name`, 200), phone: phone(h.phone, `humanAgents[${i}].phone`) };
    });
  }
  if (c.type === 'prompt') out.prompt = text(c.prompt, 'prompt');
  else if (c.type === 'pathway') {
    // What is in it is the pathway validator's to say (422 invalid_pathway, every error).
    if (!isObject(c.pathway))
      throw invalidInput(
        'pathway must be a pathway document { name, start, nodes, edges, \u2026 }, { id } (your conversational-pathways store) or { name?, steps }',
      );
    out.type = 'pathway';
    out.pathway = c.pathway;
  } else throw invalidInput('type must be "pathway" (with pathway) or "prompt" (with prompt)');
  if (c.knowledgeBase !== undefined) {
    if (!isObject(c.knowledgeBase)) throw invalidInput('knowledgeBase must be { id }');
    out.knowledgeBase = { id: text(c.knowledgeBase.id, 'knowledgeBase.id', 100) };
  }
  if (c.integrations !== undefined) {
    if (!Array.isArray(c.integrations) || c.integrations.length > 20)
      throw invalidInput('integrations must be a list of at most 20 ids');
    out.integrations = [...new Set(c.integrations.map((id, i) => text(id, `integrations[${i}]`, 100)))];
  }
  if (c.variables !== undefined) out.variables = parseCallVariables(c.variables);
  if (c.tools !== undefined) {
    // Each tool is checked (and its URL filtered) where it is declared: call-design.ts.
    if (!Array.isArray(c.tools))
      throw invalidInput(
        'tools must be an array of custom tools { type: "http", name, description, parameters, url, \u2026 }',
      );
    out.tools = c.tools;
  }
  if (c.phoneNumberId !== undefined) out.phoneNumberId = text(c.phoneNumberId, 'phoneNumberId', 100);
  if (c.webhook !== undefined) out.webhook = text(c.webhook, 'webhook', 2000);
  return out;
}
