// The sandbox analyser (DESIGN.md "Post-call analysis and analytics"): the
// analysis of a call without a language model, deterministic and labelled
// `by: "sandbox"`. It reads the caller's requests with the sandbox dialogue
// engine's own classifier (a question, a meeting, a person), sees what was
// done about each from the tool calls and the outcome, fills the schema's
// fields from the pathway's variables and the pathway extractors, and
// decides success from the outcome, the criteria's words and booked
// meetings. A request left open becomes a task.
import { classify, requestedDate } from '../../providers/language-model/sandbox.js';
import { booleanIn, emailIn, enumIn, numberIn, phoneIn } from '../pathways/extract.js';
import { type CallFacts, callerLines, type FactLine } from './facts.js';
import type { AnalysisTask, CallAnalysis } from './schemas.js';
import type { AnalysisProperty, AnalysisSettings } from './settings.js';

type Request =
  | { kind: 'question'; line: FactLine; answered: boolean }
  | { kind: 'meeting'; line: FactLine; booked: string | null }
  | { kind: 'transfer'; line: FactLine; transferred: boolean };

const FAILED_OUTCOMES = new Set([
  'provider_error',
  'instance_stopped',
  'refused',
  'no_answer',
  'busy',
  'pathway_error',
]);
const NOT_KNOWN = /\b(don'?t know|do not know|not sure|cannot|can'?t|couldn'?t|unable|no information|sorry)\b/i;
const POSITIVE = /\b(thanks|thank you|great|perfect|wonderful|excellent|lovely|brilliant|awesome)\b/i;
const NEGATIVE =
  /\b(angry|terrible|awful|complain|complaint|useless|ridiculous|upset|frustrated|unacceptable|worst)\b/i;
const MEETING_WORDS = /\b(meeting|appointment|book|booked|booking|schedule|reservation)\b/i;
const TRANSFER_WORDS = /\b(transfer|transferred|person|human|agent|colleague|representative)\b/i;

const quoted = (text: string) => `"${text.trim().replace(/\s+/g, ' ').slice(0, 120)}"`;

/** The caller's requests in order, each with what the call did about it. */
function requests(facts: CallFacts): Request[] {
  const lines = facts.transcript;
  const booked = facts.toolCalls.find(
    (t) => t.name === 'book_meeting' && (t.result as { booked?: unknown } | null)?.booked === true,
  );
  const bookedStart = booked ? String((booked.result as { start?: unknown }).start ?? '') || 'a slot' : null;
  const transferred =
    facts.outcome === 'transferred' ||
    facts.toolCalls.some((t) => t.name === 'transfer_to_human' && !(t.result as { error?: unknown } | null)?.error);
  const found: Request[] = [];
  for (const line of callerLines(facts)) {
    const intent = classify(line.text);
    if (intent === 'meeting') found.push({ kind: 'meeting', line, booked: bookedStart });
    else if (intent === 'transfer') found.push({ kind: 'transfer', line, transferred });
    else if (intent === 'question') {
      // Answered: the agent's next line says something, and not that it does not know.
      const next = lines.slice(lines.indexOf(line) + 1).find((l) => l.role === 'agent');
      found.push({ kind: 'question', line, answered: Boolean(next?.text.trim()) && !NOT_KNOWN.test(next!.text) });
    }
  }
  // One booking answers every meeting request; asking again is the same request.
  return found.filter((r, i) => r.kind === 'question' || found.findIndex((o) => o.kind === r.kind) === i);
}

const isOpen = (r: Request) =>
  r.kind === 'question' ? !r.answered : r.kind === 'meeting' ? r.booked === null : !r.transferred;

function describe(r: Request): string {
  if (r.kind === 'question') return `asked ${quoted(r.line.text)} (${r.answered ? 'answered' : 'not answered'})`;
  if (r.kind === 'meeting') return r.booked ? `booked a meeting for ${r.booked}` : 'asked for a meeting (not booked)';
  return r.transferred ? 'asked for a person and was transferred' : 'asked for a person (not transferred)';
}

function taskTitle(r: Request, facts: CallFacts): string {
  const who = facts.contact.name ?? facts.contact.phone ?? 'the caller';
  if (r.kind === 'question') return `Answer ${who}: ${quoted(r.line.text)}`;
  if (r.kind === 'meeting') return `Book a meeting with ${who}`;
  return `Call ${who} back: they asked for a person`;
}

function summaryOf(facts: CallFacts, found: Request[]): string {
  const said = found.length
    ? `The caller ${found.map(describe).join('; ')}.`
    : `The caller said ${callerLines(facts).length} line(s) with no question or request.`;
  return `${said} The call ended ${facts.outcome ?? facts.status} after ${facts.durationSeconds} s.`;
}

/** Four-letter stems of a text's longer words ("booked" and "booking" meet at "book"). */
const stems = (text: string) =>
  new Set((text.toLowerCase().match(/\p{L}{4,}/gu) ?? []).map((w) => w.slice(0, Math.min(w.length, 5))));

function successOf(
  facts: CallFacts,
  found: Request[],
  criteria: string | undefined,
): { success: boolean | null; reason: string } {
  if (facts.outcome && FAILED_OUTCOMES.has(facts.outcome))
    return { success: false, reason: `the call ended ${facts.outcome}` };
  if (facts.outcome === 'voicemail') return { success: false, reason: 'the call reached voicemail' };
  const booking = found.find((r) => r.kind === 'meeting');
  if (criteria) {
    if (MEETING_WORDS.test(criteria))
      return facts.toolCalls.some(
        (t) => t.name === 'book_meeting' && (t.result as { booked?: unknown })?.booked === true,
      )
        ? { success: true, reason: 'a meeting was booked' }
        : { success: false, reason: 'no meeting was booked' };
    if (TRANSFER_WORDS.test(criteria))
      return facts.outcome === 'transferred'
        ? { success: true, reason: 'the call was transferred' }
        : { success: false, reason: 'the call was not transferred' };
    const wanted = [...stems(criteria)];
    const said = stems(facts.transcript.map((l) => l.text).join(' '));
    const met = wanted.filter((w) => said.has(w));
    if (wanted.length === 0) return { success: null, reason: 'the criteria name nothing the sandbox can check' };
    return met.length * 2 >= wanted.length
      ? { success: true, reason: `the call spoke of ${met.join(', ')}` }
      : { success: false, reason: `the call did not speak of ${wanted.filter((w) => !said.has(w)).join(', ')}` };
  }
  const open = found.filter(isOpen);
  if (open.length) return { success: false, reason: `${open.length} request(s) left open` };
  if (booking) return { success: true, reason: 'a meeting was booked' };
  return found.length
    ? { success: true, reason: 'every request was handled' }
    : { success: null, reason: 'the caller made no request' };
}

/** A field's value in one caller line by its type, as the pathway extractors read them. */
function valueIn(name: string, p: AnalysisProperty, text: string, now: number): string | number | boolean | null {
  if (p.type === 'boolean') return booleanIn(text);
  if (p.type === 'number' || p.type === 'integer') {
    const n = numberIn(text);
    return n === null || (p.type === 'integer' && !Number.isInteger(n)) ? null : n;
  }
  if (p.enum) return enumIn(p.enum, text);
  if (p.format === 'date') return requestedDate(text, now);
  if (/phone/i.test(name)) return phoneIn(text);
  if (/e-?mail/i.test(name)) return emailIn(text);
  return null;
}

const fits = (p: AnalysisProperty, v: unknown) =>
  p.type === 'boolean'
    ? typeof v === 'boolean'
    : p.type === 'number'
      ? typeof v === 'number'
      : p.type === 'integer'
        ? Number.isInteger(v)
        : typeof v === 'string' &&
          (!p.enum || p.enum.includes(v)) &&
          (p.format !== 'date' || /^\d{4}-\d{2}-\d{2}$/.test(v));

/**
 * The schema's fields: a pathway (or call) variable of the same name first;
 * else the caller's answer to the agent line that names the field, else any
 * caller line, read by the field's type (a free-text field and a yes/no are
 * filled only from a variable or as that answer).
 */
function dataOf(facts: CallFacts, settings: AnalysisSettings): CallAnalysis['data'] {
  const data: CallAnalysis['data'] = {};
  const lines = facts.transcript;
  for (const [name, p] of Object.entries(settings.schema?.properties ?? {})) {
    const variable = facts.variables[name];
    if (variable !== undefined && fits(p, variable)) {
      data[name] = variable;
      continue;
    }
    const words = name
      .toLowerCase()
      .split('_')
      .filter((w) => w.length >= 3);
    const askedAt = lines.findIndex((l) => l.role === 'agent' && words.some((w) => l.text.toLowerCase().includes(w)));
    const answer = askedAt >= 0 ? lines.slice(askedAt + 1).find((l) => l.role === 'caller') : undefined;
    // A yes or no answers a question: only the answer to the line that names the field counts.
    const candidates = [...(answer ? [answer] : []), ...(p.type === 'boolean' ? [] : callerLines(facts))];
    for (const line of candidates) {
      const value =
        p.type === 'string' && !p.enum && !p.format && line === answer && !/phone|e-?mail/i.test(name)
          ? line.text.trim().slice(0, 500)
          : valueIn(name, p, line.text, facts.endedAt);
      if (value !== null && value !== '' && fits(p, value)) {
        data[name] = value;
        break;
      }
    }
  }
  return data;
}

function sentimentOf(facts: CallFacts): 'positive' | 'neutral' | 'negative' {
  const said = callerLines(facts)
    .map((l) => l.text)
    .join(' ');
  if (NEGATIVE.test(said)) return 'negative';
  return POSITIVE.test(said) ? 'positive' : 'neutral';
}

/** The analysis of a call with at least one caller line. */
export function sandboxAnalysis(facts: CallFacts, settings: AnalysisSettings, now: number): CallAnalysis {
  const found = requests(facts);
  const { success, reason } = successOf(facts, found, settings.successCriteria);
  const tasks: AnalysisTask[] =
    settings.tasks === false
      ? []
      : found.filter(isOpen).map((r) => {
          const due = requestedDate(r.line.text, facts.endedAt);
          return { title: taskTitle(r, facts), ...(due ? { dueDate: due } : {}) };
        });
  return {
    status: 'completed',
    summary: settings.summary === false ? null : summaryOf(facts, found),
    success,
    successReason: reason,
    data: dataOf(facts, settings),
    tasks,
    sentiment: sentimentOf(facts),
    by: 'sandbox',
    analysedAt: new Date(now).toISOString(),
  };
}
