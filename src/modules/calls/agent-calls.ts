// An agent record (DESIGN.md "Voice agent": the JSON of an object in the
// owner's `agents` store, or inline in a web call) and the call it makes:
// one prompt composition for calls to a number and calls from a browser.
import { invalidInput } from '../../http/errors.js';
import type { AssembledCall, CallTool } from '../../providers/audio/interface.js';
import { type AnalysisSettings, readAnalysisSettings } from '../analysis/settings.js';
import {
  type CallDesign,
  type CallDesignInput,
  CallTemplates,
  designedCallFields,
  pathwayPrompt,
} from './call-design.js';

/** The agent record (documented; unknown fields ignored). */
export interface AgentRecord {
  name: string;
  /** Its object in the `agents` store (set by whoever read it there; not read from the record). */
  id?: string;
  /** Post-call analysis settings; settings that are not valid are ignored (the calls are analysed with the defaults). */
  analysis?: AnalysisSettings;
  instructions?: string;
  prompt?: string;
  firstMessage?: string;
  voicemailMessage?: string;
  personaId?: string;
  /** A pathway document, `{ id }`, or the old `{ name?, steps }` (read leniently, as it always was). */
  pathway?: Record<string, unknown>;
  /** An object of the owner's `conversational-pathways` store; as the record holds it (not a string: refused when resolved, at `/id`). */
  pathwayId?: unknown;
  knowledgeBaseId?: string;
  integrations?: string[];
  /** Custom HTTP tools as the record holds them (declared when a call is assembled). */
  tools?: unknown;
  maxDurationSeconds?: number;
}

const NO_DESIGN: CallDesign = { pathway: null, customTools: [], warnings: [] };
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown, max: number): string | undefined =>
  typeof v === 'string' && v.trim() ? v.slice(0, max) : undefined;

/** Reads an agent record leniently: what the server needs, with bounds; a record without a name is unreadable (null). */
export function parseAgentRecord(raw: unknown): AgentRecord | null {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return null;
  const r = raw as Record<string, unknown>;
  const name = text(r.name, 200);
  if (!name) return null;
  const agent: AgentRecord = { name };
  for (const key of ['instructions', 'prompt', 'firstMessage', 'voicemailMessage'] as const) {
    const value = text(r[key], 10_000);
    if (value) agent[key] = value;
  }
  const personaId = text(r.personaId, 200);
  if (personaId) agent.personaId = personaId;
  const kb = text(r.knowledgeBaseId, 100);
  if (kb) agent.knowledgeBaseId = kb;
  if (Array.isArray(r.integrations))
    agent.integrations = r.integrations.filter((id): id is string => typeof id === 'string').slice(0, 20);
  const pathway = r.pathway;
  if (isObject(pathway)) {
    if (Array.isArray(pathway.steps) && pathway.nodes === undefined && pathway.start === undefined) {
      // The old list, read as leniently as before documents came: strings kept, bounded; none left is no pathway.
      const steps = pathway.steps
        .filter((s): s is string => typeof s === 'string' && s.trim() !== '')
        .slice(0, 100)
        .map((s) => s.slice(0, 2000));
      const name = text(pathway.name, 200);
      if (steps.length) agent.pathway = { ...(name ? { name } : {}), steps };
    } else agent.pathway = pathway;
  }
  // null is "none", as an absent field.
  if (r.pathwayId !== undefined && r.pathwayId !== null) agent.pathwayId = r.pathwayId;
  if (r.tools !== undefined && r.tools !== null) agent.tools = r.tools;
  if (Number.isInteger(r.maxDurationSeconds) && (r.maxDurationSeconds as number) > 0)
    agent.maxDurationSeconds = Math.min(r.maxDurationSeconds as number, 4 * 3600);
  if (r.analysis !== undefined && r.analysis !== null) {
    const analysis = readAnalysisSettings(r.analysis, 'analysis');
    if (typeof analysis !== 'string') agent.analysis = analysis;
  }
  return agent;
}

export interface AgentCallInput {
  /** The persona's instructions and voice (the agent's, else the default). */
  persona: { instructions: string; settings: { type: string; voiceId: string } };
  /** Integration functions (the built-in voice agent adds its own tools). */
  tools: CallTool[];
  /** One sentence on where the agent is: "answering calls to Main line", "talking with someone testing you from a browser". */
  situation: string;
  to: string;
  from: string | null;
  contactName: string;
  knowledgeBaseId?: string;
  integrationIds: string[];
  humans: Array<{ id: string; name: string; phone: string }>;
  /** The longest the call may last; the agent's own limit applies when it is shorter. */
  maxDurationSeconds?: number;
  /** The agent's pathway and custom tools, resolved (CallDesigns.resolve of agentDesignInput); absent: none. */
  design?: CallDesign;
  /** `{{contact.phone}}`: the caller's number of an inbound call. */
  contactPhone?: string | null;
  /** `{{now}}` (the calls' clock); absent: this moment. */
  now?: number;
}

/**
 * What call-design.ts resolves of an agent record: its pathway (`pathway` or
 * `pathwayId`, not both; `override` replaces them: a web call's own) and its
 * custom tools. `toolsPath` names the record's tools in messages.
 */
export function agentDesignInput(
  agent: AgentRecord,
  toolsPath: string,
  override?: { pathway?: unknown; pathwayId?: unknown },
): CallDesignInput {
  const named = override && (override.pathway !== undefined || override.pathwayId !== undefined) ? override : agent;
  if (named.pathway !== undefined && named.pathwayId !== undefined)
    throw invalidInput('name the pathway by pathway or by pathwayId, not both');
  const pathway = named.pathwayId !== undefined ? { id: named.pathwayId } : named.pathway;
  return { ...(pathway ? { pathway } : {}), ...(agent.tools !== undefined ? { tools: agent.tools, toolsPath } : {}) };
}

/** The assembled call of an agent record: its prompt, pathway, persona, tools and limits. */
export function agentCall(agent: AgentRecord, input: AgentCallInput): AssembledCall {
  // An agent record carries no variables: its templates know the contact and the time.
  const templates = new CallTemplates({
    variables: {},
    contact: { name: input.contactName, phone: input.contactPhone ?? null },
    now: input.now ?? Date.now(),
  });
  const parts = [input.persona.instructions, `You are ${agent.name}, ${input.situation}.`];
  const instructions = templates.fill(agent.instructions);
  const prompt = templates.fill(agent.prompt);
  const firstMessage = templates.fill(agent.firstMessage);
  const voicemailMessage = templates.fill(agent.voicemailMessage);
  if (instructions) parts.push(instructions);
  if (prompt) parts.push(prompt);
  const design = input.design ?? NO_DESIGN;
  const pathwayPart = pathwayPrompt(design.pathway, templates, { named: false });
  if (pathwayPart) parts.push(pathwayPart);
  if (input.humans.length)
    parts.push(
      `If the caller asks for a person, you can transfer them to: ${input.humans.map((h) => h.name).join(', ')}.`,
    );
  const limits = [agent.maxDurationSeconds, input.maxDurationSeconds].filter((n): n is number => n !== undefined);
  return {
    to: input.to,
    from: input.from,
    agent: {
      name: agent.name,
      ...(agent.id ? { id: agent.id } : {}),
      ...(agent.analysis ? { analysis: agent.analysis } : {}),
    },
    contact: { name: input.contactName },
    systemPrompt: parts.join('\n\n'),
    firstMessage: firstMessage || `Hello, this is ${agent.name}. How can I help you?`,
    voice: { provider: input.persona.settings.type, voiceId: input.persona.settings.voiceId },
    tools: input.tools,
    ...(limits.length ? { maxDurationSeconds: Math.min(...limits) } : {}),
    context: {
      ...(input.knowledgeBaseId ? { knowledgeBaseId: input.knowledgeBaseId } : {}),
      ...(input.integrationIds.length ? { integrationIds: input.integrationIds } : {}),
      ...(input.humans.length ? { humanAgents: input.humans } : {}),
      ...(voicemailMessage ? { voicemailMessage } : {}),
    },
    ...designedCallFields(design, { warnings: templates.warnings() }),
  };
}
