// The sandbox dialogue engine (DESIGN "Voice agent"): a deterministic stand-in
// for a language model, keyed on the caller's last words, answering through
// the same tools as a real model (so its tool calls are recorded the same
// way) and calling only the tools the request offers. Labelled sandbox. The
// session speaks the agent's firstMessage itself; the engine plays the agent
// of the call it is asked about (sandbox-agent.ts: the name in the system
// prompt, the introduction of the first message).
//   not understood: "(unclear)", "(speech not recognised)" → asks to say it again, acts on nothing
//   stop calling me / don't call … → says one line, calls opt_out (lists the number, ends the call)
//   goodbye / bye / that's all    → says goodbye, calls end_call
//   a person / human / agent …     → says it transfers, calls transfer_to_human
//   meeting / appointment / book … → with a calendar (check_availability and book_meeting offered):
//                                    check_availability for the day named ("next Tuesday", "tomorrow",
//                                    "2026-12-01"; days are UTC, relative to the call's clock), then
//                                    book_meeting on that day's first slot, confirms; without one it
//                                    says it cannot book on this call
//   hello / hi / who is this       → greets as the agent ("This is Amy from the clinic.")
//   a question (what/when/where/how …, "?", "opening hours", "tell me") → search_knowledge, says the
//                                    passage that answers it (sandbox-answer.ts: not a heading, a title
//                                    or the FAQ's question read back)
//   anything else                  → asks to rephrase
import type { Clock } from '../../lib/clock.js';
import { NOT_RECOGNISED } from '../speech-to-text/none.js';
import type { ChatMessage, ChatToolCall, CompletionRequest, LanguageModel, ModelDelta } from './interface.js';
import { agentIdentity } from './sandbox-agent.js';
import { answeringPassage } from './sandbox-answer.js';

export interface SandboxDialogueOptions {
  /** Who the agent says it is when greeted and the call's system prompt names nobody. */
  agentName?: string;
  /** The call's clock: "tomorrow" and "next Tuesday" count from its today (UTC). Default: the system clock. */
  clock?: Clock;
}

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const DAY_MS = 86_400_000;

/**
 * The day (YYYY-MM-DD, UTC) a caller asks for, relative to `now`: an ISO
 * date as it is; "today", "tomorrow"; a weekday ("Tuesday", "on Tuesday",
 * "this Tuesday", "next Tuesday") is the first such day after today, never
 * today itself. null when the words name no day.
 */
export function requestedDate(utterance: string, now: number): string | null {
  const iso = utterance.match(/\b\d{4}-\d{2}-\d{2}\b/)?.[0];
  if (iso) return iso;
  const t = utterance.toLowerCase();
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  if (/\btoday\b/.test(t)) return day(today);
  if (/\btomorrow\b/.test(t)) return day(today + DAY_MS);
  const named = new RegExp(`\\b(${WEEKDAYS.join('|')})\\b`).exec(t)?.[1];
  if (!named) return null;
  const ahead = (WEEKDAYS.indexOf(named) - new Date(today).getUTCDay() + 7) % 7 || 7;
  return day(today + ahead * DAY_MS);
}

export function describeSlot(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const day = new Intl.DateTimeFormat('en-GB', {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    timeZone: 'UTC',
  }).format(date);
  return `${day} at ${describeTime(iso)}`;
}

/** "2026-12-01T10:00:00Z" → "10:00 UTC". */
export function describeTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return `${new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hour12: false, timeZone: 'UTC' }).format(date)} UTC`;
}

/** "2026-12-01" → "Tuesday 1 December". */
export function describeDay(date: string): string {
  const d = new Date(`${date}T00:00:00Z`);
  if (Number.isNaN(d.getTime())) return date;
  return new Intl.DateTimeFormat('en-GB', { weekday: 'long', day: 'numeric', month: 'long', timeZone: 'UTC' }).format(
    d,
  );
}

type Intent = 'unclear' | 'opt_out' | 'goodbye' | 'transfer' | 'meeting' | 'greeting' | 'question' | 'unknown';

/** What the session passes for a caller line it could not (or not surely) recognise. */
export const UNCLEAR = '(unclear)';

/**
 * A line marked as not understood: a recogniser's note in parentheses
 * ("(unclear)", "(speech not recognised)", "(inaudible)") anywhere in it, or
 * a line that is only such a note. Its words, if any, are not the caller's.
 */
export function isUnclear(utterance: string): boolean {
  const t = utterance.trim().toLowerCase();
  return (
    t.includes(UNCLEAR) ||
    t.includes(NOT_RECOGNISED) ||
    /\((inaudible|unintelligible|no speech|silence|noise)\)/.test(t) ||
    /^\([^()]*\)$/.test(t)
  );
}

const GOODBYE = /\b(good ?bye|bye|that'?s all|hang up)\b/g;
/** "Please stop calling me", "don't call me again", "take me off your list" (DESIGN.md "Campaigns": the opt-out callee). */
const OPT_OUT =
  /\b(stop (calling|ringing)|(don'?t|do not|never) (call|ring|phone)( me)?( again)?|remove (me|my number)|take (me|my number) off|unsubscribe)\b/;
const TRANSFER = /\b(person|human|agent|someone|somebody|representative|operator|colleague)\b/;
const MEETING = /\b(meeting|appointment|booking|book|schedule|reserve|reservation)\b/;

export function classify(utterance: string): Intent {
  const t = utterance.toLowerCase().trim();
  if (isUnclear(t)) return 'unclear';
  if (OPT_OUT.test(t)) return 'opt_out';
  // A goodbye ends the line only when nothing asked for follows it: "thanks, book it, bye" is a goodbye; "bye bye
  // meeting" (keyword spotting's hearing of "book a meeting") asks for a meeting.
  const lastGoodbye = [...t.matchAll(GOODBYE)].at(-1);
  if (lastGoodbye) {
    const after = t.slice(lastGoodbye.index + lastGoodbye[0].length);
    if (!TRANSFER.test(after) && !MEETING.test(after)) return 'goodbye';
  }
  if (TRANSFER.test(t)) return 'transfer';
  if (MEETING.test(t)) return 'meeting';
  if (
    /^(hello|hi|hey|good (morning|afternoon|evening))\b/.test(t) ||
    /\b(who('s| is) (this|that|speaking)|who are you|who am i (speaking|talking) (to|with)|what('s| is) your name)\b/.test(
      t,
    )
  )
    return 'greeting';
  if (
    /\?\s*$/.test(t) ||
    /^(what|when|where|how|why|who|which|can|could|do|does|is|are|will|would)\b/.test(t) ||
    /\b(opening hours|tell me|i want to know|i'd like to know)\b/.test(t)
  )
    return 'question';
  return 'unknown';
}

/** Tools the engine has been offered, by name: a real model cannot call a tool it was not given, neither does the engine. */
type Offered = (name: string) => boolean;

/** A meeting needs both: availability to offer a slot, booking to take it. */
const CALENDAR_TOOLS = ['check_availability', 'book_meeting'];

type Say = (text: string) => ModelDelta[];
type Call = (name: string, args: Record<string, unknown>) => ModelDelta;

export class SandboxDialogue implements LanguageModel {
  readonly name = 'sandbox';
  readonly sandbox = true;

  constructor(private readonly options: SandboxDialogueOptions = {}) {}

  private now(): number {
    return this.options.clock?.now() ?? Date.now();
  }

  async *complete(request: CompletionRequest): AsyncIterable<ModelDelta> {
    const { messages, signal } = request;
    const last = messages[messages.length - 1];
    const callId = `sandbox_call_${messages.length}`;
    const names = new Set(request.tools.map((t) => t.name));
    const offered: Offered = (name) => names.has(name);
    const say: Say = (text) => text.split(/(?<= )/).map((w) => ({ type: 'text', text: w }) as ModelDelta);
    const call: Call = (name, args) => ({
      type: 'tool_call',
      call: { id: callId, type: 'function', function: { name, arguments: JSON.stringify(args) } },
    });
    const identity = agentIdentity(messages, this.options.agentName);
    let out: ModelDelta[];
    if (last?.role === 'tool') out = this.afterTool(messages, last, say, call, offered);
    else if (last?.role === 'user') out = this.answer(last.content, identity, say, call, offered);
    else out = say(identity ? `Hello, this is ${identity}. How can I help you?` : 'Hello, how can I help you?');
    for (const delta of out) {
      if (signal.aborted) throw signal.reason;
      yield delta;
    }
    yield { type: 'done', finishReason: out.some((d) => d.type === 'tool_call') ? 'tool_calls' : 'stop' };
  }

  private answer(utterance: string, identity: string | null, say: Say, call: Call, offered: Offered): ModelDelta[] {
    switch (classify(utterance)) {
      case 'unclear':
        // Words the recogniser was not sure of are not acted on: no goodbye, no transfer, no booking.
        return say("Sorry, I didn't catch that. Could you say that again?");
      case 'opt_out':
        // The opt_out tool lists the number and ends the call; a call without it (no number to list) says goodbye.
        if (offered('opt_out')) return [...say("I understand. We won't call you again. Goodbye."), call('opt_out', {})];
        return [...say('I understand. Goodbye.'), ...(offered('end_call') ? [call('end_call', {})] : [])];
      case 'goodbye':
        return [...say('Thank you for calling. Goodbye!'), ...(offered('end_call') ? [call('end_call', {})] : [])];
      case 'transfer':
        if (!offered('transfer_to_human'))
          return say("I'm sorry, I can't transfer you on this call, but I'm happy to help with anything else.");
        return [...say('Of course, let me put you through to a colleague.'), call('transfer_to_human', {})];
      case 'meeting': {
        if (!CALENDAR_TOOLS.every(offered))
          return say("I'm sorry, I can't book meetings on this call, but I'm happy to help with anything else.");
        const date = requestedDate(utterance, this.now());
        return [
          ...say(date ? `Let me check the calendar for ${describeDay(date)}.` : 'Let me check the calendar.'),
          call('check_availability', date ? { date } : {}),
        ];
      }
      case 'greeting':
        return say(`Hello! This is ${identity ?? 'the virtual assistant'}. How can I help you today?`);
      case 'question':
        if (!offered('search_knowledge')) return say("I'm sorry, I don't have information about that.");
        return [call('search_knowledge', { query: utterance.replace(/[?!.]+$/, '').trim() })];
      default:
        return say("Sorry, I didn't understand that. Could you say it another way?");
    }
  }

  private afterTool(
    messages: ChatMessage[],
    last: Extract<ChatMessage, { role: 'tool' }>,
    say: Say,
    call: Call,
    offered: Offered,
  ): ModelDelta[] {
    const toolCall = messages
      .flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []))
      .find((c: ChatToolCall) => c.id === last.tool_call_id);
    let result: Record<string, unknown> = {};
    try {
      result = JSON.parse(last.content) as Record<string, unknown>;
    } catch {
      /* a result that is not JSON reads as empty */
    }
    const failed = typeof result.error === 'string';
    switch (toolCall?.function.name) {
      case 'search_knowledge': {
        const matches = Array.isArray(result.matches)
          ? (result.matches as Array<{ text?: unknown; title?: unknown }>)
          : [];
        const question = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
        // The best match that holds an answer: one of only headings or questions gives way to the next.
        for (const match of failed ? [] : matches) {
          if (typeof match.text !== 'string') continue;
          const passage = answeringPassage(match.text, question, typeof match.title === 'string' ? [match.title] : []);
          if (passage) return say(passage);
        }
        return say("I'm sorry, I don't have information about that.");
      }
      case 'check_availability': {
        // The day asked for (the call's arguments): only a slot on that day will do.
        let date: string | undefined;
        try {
          date = (JSON.parse(toolCall.function.arguments) as { date?: string }).date;
        } catch {
          date = undefined;
        }
        const slots = (
          Array.isArray(result.slots) ? result.slots.filter((s): s is string => typeof s === 'string') : []
        ).filter((s) => !date || s.startsWith(date));
        if (failed || !slots.length)
          return say(
            date
              ? `I'm sorry, there are no open slots on ${describeDay(date)}.`
              : "I'm sorry, there are no open slots at the moment.",
          );
        const offer = date
          ? `The first open slot on ${describeDay(date)} is at ${describeTime(slots[0]!)}.`
          : `The first open slot is ${describeSlot(slots[0]!)}.`;
        if (!offered('book_meeting')) return say(`${offer} I can't book it on this call.`);
        return [...say(`${offer} I'll book it for you.`), call('book_meeting', { start: slots[0] })];
      }
      case 'book_meeting':
        if (failed || result.booked === false) return say("I'm sorry, I couldn't book that slot.");
        return say(
          `You're booked for ${describeSlot(String(result.start ?? ''))}. Is there anything else I can help with?`,
        );
      case 'transfer_to_human':
        return failed || result.ok === false ? say("I'm sorry, nobody is available to take your call right now.") : [];
      default:
        return [];
    }
  }
}
