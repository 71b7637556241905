// An agent record (DESIGN.md "Voice agent": the JSON of an object in the
// owner's `agents` store, or inline in a web call) and the call it makes:
// one prompt composition for calls to a number and calls from a browser.
import type { AssembledCall, CallTool } from '../../providers/audio/interface.js';

/** The agent record (documented; unknown fields ignored). */
export interface AgentRecord {
  name: string;
  instructions?: string;
  prompt?: string;
  firstMessage?: string;
  voicemailMessage?: string;
  personaId?: string;
  pathway?: { name?: string; steps: string[] };
  knowledgeBaseId?: string;
  integrations?: string[];
  maxDurationSeconds?: number;
}

const text = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.trim() ? v.slice(0, max) : undefined);

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
  if (Array.isArray(r.integrations)) agent.integrations = r.integrations.filter((id): id is string => typeof id === 'string').slice(0, 20);
  const pathway = r.pathway as { name?: unknown; steps?: unknown } | undefined;
  if (pathway && Array.isArray(pathway.steps)) agent.pathway = { ...(text(pathway.name, 200) ? { name: text(pathway.name, 200) } : {}), steps: pathway.steps.filter((s): s is string => typeof s === 'string').slice(0, 100) };
  if (Number.isInteger(r.maxDurationSeconds) && (r.maxDurationSeconds as number) > 0) agent.maxDurationSeconds = Math.min(r.maxDurationSeconds as number, 4 * 3600);
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
}

/** The assembled call of an agent record: its prompt, pathway, persona, tools and limits. */
export function agentCall(agent: AgentRecord, input: AgentCallInput): AssembledCall {
  const parts = [input.persona.instructions, `You are ${agent.name}, ${input.situation}.`];
  if (agent.instructions) parts.push(agent.instructions);
  if (agent.prompt) parts.push(agent.prompt);
  if (agent.pathway?.steps.length) parts.push(`Follow this conversation pathway, step by step:\n${agent.pathway.steps.map((s, i) => `${i + 1}. ${s}`).join('\n')}`);
  if (input.humans.length) parts.push(`If the caller asks for a person, you can transfer them to: ${input.humans.map((h) => h.name).join(', ')}.`);
  const limits = [agent.maxDurationSeconds, input.maxDurationSeconds].filter((n): n is number => n !== undefined);
  return {
    to: input.to,
    from: input.from,
    agent: { name: agent.name },
    contact: { name: input.contactName },
    systemPrompt: parts.join('\n\n'),
    firstMessage: agent.firstMessage ?? `Hello, this is ${agent.name}. How can I help you?`,
    voice: { provider: input.persona.settings.type, voiceId: input.persona.settings.voiceId },
    tools: input.tools,
    ...(limits.length ? { maxDurationSeconds: Math.min(...limits) } : {}),
    context: {
      ...(input.knowledgeBaseId ? { knowledgeBaseId: input.knowledgeBaseId } : {}),
      ...(input.integrationIds.length ? { integrationIds: input.integrationIds } : {}),
      ...(input.humans.length ? { humanAgents: input.humans } : {}),
      ...(agent.voicemailMessage ? { voicemailMessage: agent.voicemailMessage } : {}),
    },
  };
}
