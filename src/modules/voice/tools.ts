// The tools a call's model may use, declared once: TypeBox parameters give
// the model its JSON Schema and the code its static type; execute() calls the
// services the session was given (ToolContext). Arguments are checked before
// execute runs; a tool that fails answers the model with { error } instead of
// breaking the reply. An abort (barge-in, hang-up) is not a failure: it throws.
// A call is offered only the tools whose services it has (a calendar, a
// knowledge base, people to transfer to). What a barge-in does to a tool call
// in flight is each tool's `onBargeIn` (docs/decisions/voice-agent.md).
import { Type, type Static, type TSchema } from 'typebox';
import { Value } from 'typebox/value';
import type { ToolSpec } from '../../providers/language-model/interface.js';

export interface KnowledgeMatch {
  text: string;
  title?: string;
  score?: number;
}

export interface BookingResult {
  booked: boolean;
  start: string;
  /** Where the caller finishes the booking (Calendly single-use link), when the provider works that way. */
  bookingUrl?: string;
  message?: string;
}

export interface TransferResult {
  ok: boolean;
  /** The human agent's name, to say who the call goes to. */
  name?: string;
  message?: string;
}

/** What the tools act on. The lead wires knowledge search, scheduling and telephony in; the session adds endCall. */
export interface ToolContext {
  /** Top matches of the call's knowledge base, best first. */
  searchKnowledge(query: string, signal: AbortSignal): Promise<KnowledgeMatch[]>;
  /** Open start times (ISO 8601), soonest first; `date` (YYYY-MM-DD) narrows to that day. */
  checkAvailability(date: string | undefined, signal: AbortSignal): Promise<string[]>;
  bookMeeting(input: { start: string; name?: string; email?: string }, signal: AbortSignal): Promise<BookingResult>;
  /** Arranges the transfer; the session carries it out once the agent's last words have played. */
  transferToHuman(humanAgentId: string | undefined, signal: AbortSignal): Promise<TransferResult>;
  /** Lists the number the call talks to on the account's do-not-call list (the caller asked not to be called again); only outbound calls have one. */
  optOut?(signal: AbortSignal): Promise<void>;
  /** Asks the session to hang up once the agent's last words have played. */
  endCall(): void;
}

/** Services a call may lack: a tool needing one it lacks is not offered to its model. */
export type ToolServices = Partial<Omit<ToolContext, 'endCall'>>;

export interface VoiceTool<S extends TSchema = TSchema> {
  name: string;
  description: string;
  parameters: S;
  /** The service it calls (end_call's is the session's own). */
  needs?: keyof ToolServices;
  /**
   * A barge-in while it runs: `cancel` for a tool that only reads (its signal
   * aborts; its answer was for a turn the caller has left); `complete` for one
   * that acts (a booking, a transfer): once sent it is not taken back, and its
   * result is recorded and told to the model on its next turn.
   */
  onBargeIn: 'cancel' | 'complete';
  execute(args: Static<S>, context: ToolContext, options: { signal: AbortSignal }): Promise<unknown>;
}

function tool<S extends TSchema>(definition: VoiceTool<S>): VoiceTool<S> {
  return definition;
}

const DATE = '^\\d{4}-\\d{2}-\\d{2}$';

export const searchKnowledge = tool({
  name: 'search_knowledge',
  needs: 'searchKnowledge',
  onBargeIn: 'cancel',
  description:
    "Searches the business's knowledge base. Use it before answering any question about the business (hours, prices, services, places).",
  parameters: Type.Object(
    { query: Type.String({ minLength: 1, maxLength: 500, description: 'What to look up, in a few words' }) },
    { additionalProperties: false },
  ),
  async execute({ query }, context, { signal }) {
    const matches = await context.searchKnowledge(query, signal);
    return {
      matches: matches.slice(0, 5).map((m) => ({
        text: m.text,
        ...(m.title ? { title: m.title } : {}),
        ...(m.score !== undefined ? { score: m.score } : {}),
      })),
    };
  },
});

export const checkAvailability = tool({
  name: 'check_availability',
  needs: 'checkAvailability',
  onBargeIn: 'cancel',
  description:
    'Lists open meeting slots (ISO 8601 start times), soonest first. Give a date (YYYY-MM-DD) to look at one day.',
  parameters: Type.Object(
    { date: Type.Optional(Type.String({ pattern: DATE, description: 'YYYY-MM-DD' })) },
    { additionalProperties: false },
  ),
  async execute({ date }, context, { signal }) {
    const slots = await context.checkAvailability(date, signal);
    return { slots: slots.slice(0, 10) };
  },
});

export const bookMeeting = tool({
  name: 'book_meeting',
  needs: 'bookMeeting',
  onBargeIn: 'complete',
  description: 'Books a meeting at one of the open slots from check_availability.',
  parameters: Type.Object(
    {
      start: Type.String({ format: 'date-time', minLength: 10, description: 'ISO 8601 start time of an open slot' }),
      name: Type.Optional(Type.String({ maxLength: 200 })),
      email: Type.Optional(Type.String({ maxLength: 320 })),
    },
    { additionalProperties: false },
  ),
  async execute(args, context, { signal }) {
    if (Number.isNaN(Date.parse(args.start))) return { error: 'start must be an ISO 8601 time' };
    return context.bookMeeting(args, signal);
  },
});

export const transferToHuman = tool({
  name: 'transfer_to_human',
  needs: 'transferToHuman',
  onBargeIn: 'complete',
  description: 'Transfers the call to a person. Say a short line first; the transfer happens after it is heard.',
  parameters: Type.Object(
    { humanAgentId: Type.Optional(Type.String({ maxLength: 200 })) },
    { additionalProperties: false },
  ),
  async execute({ humanAgentId }, context, { signal }) {
    return context.transferToHuman(humanAgentId, signal);
  },
});

export const optOut = tool({
  name: 'opt_out',
  needs: 'optOut',
  onBargeIn: 'complete',
  description:
    'The caller asked not to be called again: lists their number on the do-not-call list and ends the call after your last words. Say one short line first.',
  parameters: Type.Object({}, { additionalProperties: false }),
  async execute(_args, context, { signal }) {
    if (!context.optOut) return { error: 'this call has no number to list' };
    await context.optOut(signal);
    context.endCall();
    return { ok: true, listed: true };
  },
});

export const endCall = tool({
  name: 'end_call',
  onBargeIn: 'complete',
  description: 'Ends the call after your last words have been heard. Say goodbye first.',
  parameters: Type.Object({}, { additionalProperties: false }),
  async execute(_args, context) {
    context.endCall();
    return { ok: true };
  },
});

export const VOICE_TOOLS: VoiceTool[] = [
  searchKnowledge,
  checkAvailability,
  bookMeeting,
  transferToHuman,
  optOut,
  endCall,
] as VoiceTool[];

/** The tools of a call with these services: each one whose service it has, and end_call. */
export function offeredTools(services: ToolServices): VoiceTool[] {
  return VOICE_TOOLS.filter((t) => t.needs === undefined || services[t.needs] !== undefined);
}

/** A signal no barge-in aborts: what a tool that acts runs under once sent. */
const NEVER_ABORTED = new AbortController().signal;

export interface ToolCallRecord {
  name: string;
  arguments: unknown;
  result: unknown;
  /** Call time (ms since the call started) the tool was called. */
  atMs: number;
}

/** What a tool call settles with: the arguments as parsed, the result the model is told; `say`, lines to say after it; `stop`, the model is not asked again this reply (the call's pathway has ended). */
export interface ToolSettled {
  arguments: unknown;
  result: unknown;
  say?: string[];
  stop?: boolean;
}

/** The tools a reply offers and calls (ToolRegistry; the call's CallTools adds the pathway's and the customer's). */
export interface ReplyTools {
  specs(): ToolSpec[];
  completesOnBargeIn(name: string): boolean;
  /** `hooks.say` says a line while the tool runs (a custom tool's `speak`). Throws only when `signal` aborts a tool that is cancelled then. */
  call(
    name: string,
    rawArguments: string,
    signal: AbortSignal,
    hooks?: { say(text: string): void },
  ): Promise<ToolSettled>;
}

export class ToolRegistry implements ReplyTools {
  private readonly byName: Map<string, VoiceTool>;

  constructor(
    private readonly context: ToolContext,
    tools: VoiceTool[] = VOICE_TOOLS,
  ) {
    this.byName = new Map(tools.map((t) => [t.name, t]));
  }

  /** What the model is told. */
  specs(): ToolSpec[] {
    return [...this.byName.values()].map((t) => ({
      name: t.name,
      description: t.description,
      parameters: JSON.parse(JSON.stringify(t.parameters)) as Record<string, unknown>,
    }));
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** true for a tool whose call, once sent, a barge-in does not take back (tools.ts `onBargeIn`). */
  completesOnBargeIn(name: string): boolean {
    return this.byName.get(name)?.onBargeIn === 'complete';
  }

  /**
   * Runs one call from the model. `rawArguments` is the model's JSON string.
   * Returns the parsed arguments and the result the model sees ({ error } for
   * an unknown tool, bad arguments or a failing service). Throws only when the
   * signal aborts, for a tool that is cancelled then; one that completes
   * (`onBargeIn: 'complete'`) never sees the signal and always settles.
   */
  async call(
    name: string,
    rawArguments: string,
    signal: AbortSignal,
  ): Promise<{ arguments: unknown; result: unknown }> {
    const definition = this.byName.get(name);
    let args: unknown;
    try {
      args = rawArguments.trim() ? JSON.parse(rawArguments) : {};
    } catch {
      return { arguments: rawArguments, result: { error: 'arguments are not JSON' } };
    }
    if (!definition) return { arguments: args, result: { error: `unknown tool ${name}` } };
    if (!Value.Check(definition.parameters, args)) {
      const first = [...Value.Errors(definition.parameters, args)][0];
      return {
        arguments: args,
        result: { error: `invalid arguments: ${first ? `${first.instancePath || '/'} ${first.message}` : 'rejected'}` },
      };
    }
    const toolSignal = definition.onBargeIn === 'cancel' ? signal : NEVER_ABORTED;
    try {
      return { arguments: args, result: await definition.execute(args as never, this.context, { signal: toolSignal }) };
    } catch (error) {
      if (toolSignal.aborted) throw toolSignal.reason ?? error;
      return { arguments: args, result: { error: error instanceof Error ? error.message : String(error) } };
    }
  }
}
