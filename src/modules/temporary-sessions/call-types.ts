// Temporary-session call types are data (DESIGN "Telephony"): built in, or a
// JSON file named by TEMPORARY_CALL_TYPES_FILE, checked at start-up so a bad
// file stops the server instead of placing odd calls.
import { readFileSync } from 'node:fs';

export interface CallType {
  /** Lower-case slug, what PUT /api/session/temporary names. */
  id: string;
  name: string;
  description: string;
  /** Who speaks and how. */
  agent: { name: string; personaId?: string };
  /** What the agent does on the call. */
  prompt: string;
  firstMessage: string;
  /** The audio server ends the call by then; the number's lease lasts this plus a margin. */
  maxDurationSeconds: number;
}

export const defaultCallTypes: CallType[] = [
  {
    id: 'appointment-reminder',
    name: 'Appointment reminder',
    description: 'An agent reminds you of a dental appointment tomorrow at 10:00 and offers to move it.',
    agent: { name: 'Amy', personaId: 'local-amy' },
    prompt:
      'Remind the contact of their dental appointment tomorrow at 10:00. Confirm they can come; if not, offer 14:00 the same day or the next morning. Be brief and friendly.',
    firstMessage: 'Hi, this is Amy from Bright Smile Dental, calling about your appointment tomorrow at ten.',
    maxDurationSeconds: 180,
  },
  {
    id: 'lead-qualification',
    name: 'Lead qualification',
    description: 'An agent asks three short questions to see whether you are a fit for a software trial.',
    agent: { name: 'James', personaId: 'local-james' },
    prompt:
      'You follow up on a free-trial sign-up. Ask how many people are on their team, which tool they use today, and when they want to start. Thank them and end the call.',
    firstMessage: 'Hello, this is James from Workspace. You signed up for a trial; do you have two minutes?',
    maxDurationSeconds: 300,
  },
  {
    id: 'customer-support',
    name: 'Customer support',
    description: 'An agent answers a question about your order and says when it ships.',
    agent: { name: 'Amy', personaId: 'local-amy' },
    prompt:
      'The contact asked where their order is. Tell them it ships tomorrow and arrives in two to three days. Offer to send the tracking link by SMS.',
    firstMessage: 'Hi, this is Amy from Workspace support, calling back about your order.',
    maxDurationSeconds: 300,
  },
];

export class CallTypeError extends Error {}

const text = (v: unknown, max: number) => typeof v === 'string' && v.trim().length > 0 && v.length <= max;

export function checkCallTypes(value: unknown, source: string): CallType[] {
  const list = Array.isArray(value) ? value : (value as { types?: unknown })?.types;
  if (!Array.isArray(list) || list.length === 0)
    throw new CallTypeError(`${source}: expected a non-empty array of call types`);
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const t = (raw ?? {}) as Partial<CallType>;
    const where = `${source}: call type ${i + 1}`;
    if (typeof t.id !== 'string' || !/^[a-z0-9][a-z0-9_-]{0,63}$/.test(t.id))
      throw new CallTypeError(`${where}: id must be lower-case letters, digits, - or _`);
    if (seen.has(t.id)) throw new CallTypeError(`${where}: duplicate id ${t.id}`);
    seen.add(t.id);
    if (!text(t.name, 200) || !text(t.description, 2000))
      throw new CallTypeError(`${where}: name and description must be non-empty text`);
    if (!t.agent || !text(t.agent.name, 200) || (t.agent.personaId !== undefined && !text(t.agent.personaId, 200)))
      throw new CallTypeError(`${where}: agent must be { name, personaId? }`);
    if (!text(t.prompt, 20_000) || !text(t.firstMessage, 2000))
      throw new CallTypeError(`${where}: prompt and firstMessage must be non-empty text`);
    if (!Number.isInteger(t.maxDurationSeconds) || t.maxDurationSeconds! < 30 || t.maxDurationSeconds! > 3600)
      throw new CallTypeError(`${where}: maxDurationSeconds must be a whole number from 30 to 3600`);
    return {
      id: t.id,
      name: t.name!,
      description: t.description!,
      agent: { name: t.agent.name, ...(t.agent.personaId ? { personaId: t.agent.personaId } : {}) },
      prompt: t.prompt!,
      firstMessage: t.firstMessage!,
      maxDurationSeconds: t.maxDurationSeconds!,
    };
  });
}

export function loadCallTypes(file: string | null): CallType[] {
  if (!file) return checkCallTypes(defaultCallTypes, 'built-in call types');
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CallTypeError(`TEMPORARY_CALL_TYPES_FILE: cannot read ${file}: ${(err as Error).message}`);
  }
  return checkCallTypes(parsed, 'TEMPORARY_CALL_TYPES_FILE');
}
