// Who the sandbox dialogue engine plays on a call, read from the call's own
// messages (the engine is one per process, so its options cannot say): the
// agent's name from the system prompt, and how it introduced itself from the
// first message the session spoke.
import type { ChatMessage } from './interface.js';

/**
 * The call's composition (agent-calls.ts agentCall, session-service.ts
 * systemPrompt) gives the agent's name a paragraph of its own, "You are
 * <name>, <situation>.", after the persona's instructions, which may say
 * "You are <persona>, …" themselves: the known situations pick the agent's.
 */
const AGENT_LINE = /^You are (.+), (?:answering calls\b|talking with\b|calling\b).*$/;
/** Else the first "You are <Capitalised Name>," or "." in the prompt (not "You are a friendly …"). */
const ANY_NAME = /(?:^|\n)\s*You are ((?!(?:A|An|The)\b)[A-Z][\w'\u2019.-]*(?: [A-Z][\w'\u2019.-]*){0,3})\s*[,.]/;

export function agentNameFromPrompt(prompt: string): string | null {
  for (const paragraph of prompt.split(/\n\s*\n/)) {
    const name = AGENT_LINE.exec(paragraph.trim())?.[1]?.trim();
    if (name) return name;
  }
  return ANY_NAME.exec(prompt)?.[1]?.replace(/\.$/, '') ?? null;
}

/** "Hello Grace, this is Amy from the clinic." → "Amy from the clinic". */
const INTRODUCTION = /\b(?:this is|I am|I'm|my name is)\s+([^.!?,;:\u2026]+)/i;

/**
 * How the agent introduced itself in its first message ("Amy from the
 * clinic"), when that introduction names it; else its name; null when
 * neither is known.
 */
export function agentIdentity(messages: ChatMessage[], fallbackName?: string): string | null {
  const system = messages.find((m) => m.role === 'system');
  const name = (system ? agentNameFromPrompt(system.content) : null) ?? fallbackName ?? null;
  // The first message is the agent's line before the caller said anything (as heard: "…" when cut).
  const firstUser = messages.findIndex((m) => m.role === 'user');
  const greeting = messages
    .slice(0, firstUser < 0 ? messages.length : firstUser)
    .find((m) => m.role === 'assistant' && typeof m.content === 'string');
  const introduced =
    greeting?.role === 'assistant' ? INTRODUCTION.exec(greeting.content ?? '')?.[1]?.trim() : undefined;
  if (introduced && introduced.length <= 80) {
    if (name && introduced.toLowerCase().startsWith(name.toLowerCase()) && /^$|^\W/.test(introduced.slice(name.length)))
      return introduced;
    if (!name && /^[A-Z]/.test(introduced)) return introduced;
  }
  return name;
}
