// One agent reply: model stream → sentences → speech per sentence → sink,
// under one AbortSignal (the session's barge-in aborts it). Tool calls run
// through the registry and go back to the model until it answers in text.
// The model is retried once (any failure, or no first token within
// llmDeadlineMs) while nothing of the attempt has been said; a second failure
// says one apology line. A failing voice hands the rest of the reply to the
// fallback voice (the local one). The reply returns facts only: segments with
// audio and played ms, tool calls, whether it was cut, latency. A barge-in
// cancels a tool call in flight that only reads; one that acts (a booking)
// goes on, handed back as a late tool call for the history and the record.
import { sleep, type TimerClock } from '../../lib/clock.js';
import type { CallSpeech, CallVoice } from '../../providers/call-speech/interface.js';
import { ProviderFailure } from '../../providers/failure.js';
import type {
  ChatMessage,
  ChatToolCall,
  LanguageModel,
  ModelDelta,
  ToolSpec,
} from '../../providers/language-model/interface.js';
import type { SegmentFacts } from './heard-text.js';
import type { HistoryToolCall } from './history.js';
import { SentenceSplitter } from './sentences.js';
import type { AudioSink } from './sink.js';
import type { ReplyTools, ToolCallRecord } from './tools.js';

export interface Latency {
  sttMs: number;
  llmFirstTokenMs: number;
  ttsFirstByteMs: number;
  overheadMs: number;
  totalMs: number;
}

export interface Voice {
  speech: CallSpeech;
  voice: CallVoice;
}

export interface ReplyDeps {
  model: LanguageModel;
  tools: ReplyTools;
  /** The system prompt as it is now (a pathway's current step changes it): it replaces the first message before each model round. */
  systemPrompt?: () => string;
  /** The agent's voice, then the local voice used when it fails. */
  voices: Voice[];
  sink: ReplySink;
  clock: TimerClock;
  /** Call time zero (tool call atMs are relative to it). */
  callStartMs: number;
  llmDeadlineMs?: number;
  maxToolRounds?: number;
  apology?: string;
  /** Told as soon as a tool call has settled (the record and the browser show it live). */
  onToolCall?(call: ToolCallRecord): void;
  /** Told as each sentence starts being heard (its first frame goes out), with the clock ms. */
  onSentenceStart?(text: string, atMs: number): void;
}

/** What a reply needs of its sink: the call's AudioSink, or agent tests' text sink (agent-tests/text-conversation.ts). */
export type ReplySink = Pick<
  AudioSink,
  'startSegment' | 'write' | 'endSegment' | 'segmentDone' | 'audioMs' | 'playedMs' | 'firstFrameAt'
>;

export interface ReplyRequest {
  signal: AbortSignal;
  /** Ask the model with these messages … */
  messages?: ChatMessage[];
  /** … or speak this text as it is (greeting, reprompt, resume). */
  text?: string;
  /** End of the caller's speech (clock ms) this reply answers, and how long recognition took after it: for latency. */
  turnEndMs?: number;
  sttMs?: number;
}

export interface ReplySegment extends SegmentFacts {
  segment: number;
  /** Clock ms its first frame went out (null: never started). */
  startedAtMs: number | null;
}

/** A tool call that acts (tools.ts `onBargeIn: 'complete'`) still running when the reply was cut: it settles later. */
export interface LateToolCall {
  call: ChatToolCall;
  /** The model round that asked for it. */
  round: number;
  /** Call time (ms since the call started) it was called. */
  atMs: number;
  settled: Promise<{ arguments: unknown; result: unknown }>;
}

export interface ReplyFacts {
  segments: ReplySegment[];
  /** Per model round, the tool calls that ran (for the history). */
  rounds: Array<{ toolCalls: HistoryToolCall[] }>;
  toolCalls: ToolCallRecord[];
  /** Tool calls that act, sent before the reply was cut and not settled then. */
  lateToolCalls: LateToolCall[];
  /** Text the reply had but never gave to the sink (cut before its turn). */
  pending: string;
  interrupted: boolean;
  latency: Latency | null;
  /** Clock ms the first agent frame went out, if any. */
  firstFrameAtMs: number | null;
  /** A provider failed (the reply went on with a retry, an apology or the fallback voice, unless fatal). */
  errors: Array<{ provider: string; message: string }>;
  /** Every voice failed: the call cannot go on. */
  fatal: boolean;
  /** Index into voices of the voice in use at the end (the session keeps using it). */
  voiceIndex: number;
}

export const DEFAULT_APOLOGY = "I'm sorry, I'm having trouble answering right now. Could you say that again?";

class SpeechUnavailable extends Error {}

/** Settles with the promise, or rejects as soon as the signal aborts: a provider that ignores its signal cannot hold a reply. */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function isAbort(error: unknown, signal: AbortSignal) {
  return signal.aborted || (error instanceof Error && error.name === 'AbortError');
}

function describe(error: unknown, fallbackProvider: string) {
  if (error instanceof ProviderFailure)
    return { provider: error.provider, message: error.message.replace(`${error.provider}: `, '') };
  return { provider: fallbackProvider, message: error instanceof Error ? error.message : String(error) };
}

/** The facts of a reply that has said and done nothing (yet). */
export function emptyFacts(voiceIndex: number): ReplyFacts {
  return {
    segments: [],
    rounds: [],
    toolCalls: [],
    lateToolCalls: [],
    pending: '',
    interrupted: false,
    latency: null,
    firstFrameAtMs: null,
    errors: [],
    fatal: false,
    voiceIndex,
  };
}

/**
 * What a reply asks the model for `messages` (the first, the system message, becomes the agent's prompt of the
 * moment, in place: a reply's later rounds reuse the array). The model asked ahead builds its request here too, so
 * the two are the same request whenever the turn is the one it guessed.
 */
export function modelRequest(
  messages: ChatMessage[],
  systemPrompt: string | undefined,
  tools: Pick<ReplyTools, 'specs'>,
): { messages: ChatMessage[]; tools: ToolSpec[] } {
  if (systemPrompt !== undefined && messages[0]?.role === 'system')
    messages[0] = { role: 'system', content: systemPrompt };
  return { messages, tools: tools.specs() };
}

export async function runReply(deps: ReplyDeps, request: ReplyRequest, voiceIndex = 0): Promise<ReplyFacts> {
  const { clock, sink, signal } = { ...deps, signal: request.signal };
  const startedAt = clock.now();
  const facts = emptyFacts(voiceIndex);
  let firstTextAt: number | null = null;
  let firstSentenceSentAt: number | null = null;
  let firstAudioAt: number | null = null;

  // Speaker: sentences in order, one segment each.
  const queue: Array<{ text: string; round: number }> = [];
  let wake: (() => void) | null = null;
  let producing = true;
  const speaker = (async () => {
    for (;;) {
      if (signal.aborted) return;
      const next = queue.shift();
      if (!next) {
        if (!producing) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
        continue;
      }
      await speak(next.text, next.round);
    }
  })();
  speaker.catch(() => {}); // awaited below; this only keeps an early failure from counting as unhandled
  const enqueue = (text: string, round: number) => {
    queue.push({ text, round });
    wake?.();
  };
  const doneProducing = () => {
    producing = false;
    wake?.();
  };

  async function speak(text: string, round: number) {
    const segment = sink.startSegment((atMs) => deps.onSentenceStart?.(text, atMs));
    const facts_: ReplySegment = { segment, text, round, audioMs: 0, playedMs: 0, startedAtMs: null };
    facts.segments.push(facts_);
    const sentAt = clock.now();
    if (firstSentenceSentAt === null) firstSentenceSentAt = sentAt;
    while (facts.voiceIndex < deps.voices.length) {
      const { speech, voice } = deps.voices[facts.voiceIndex]!;
      let yielded = false;
      try {
        const chunks = speech.synthesize(text, voice, signal)[Symbol.asyncIterator]();
        for (;;) {
          const next = await untilAborted(chunks.next(), signal);
          if (next.done || signal.aborted) break;
          if (!yielded && firstAudioAt === null) firstAudioAt = clock.now();
          yielded = true;
          sink.write(segment, next.value);
        }
        break;
      } catch (error) {
        if (isAbort(error, signal)) break;
        facts.errors.push(describe(error, speech.name));
        facts.voiceIndex++;
        // Audio already out stays; the next voice says the sentence only if nothing of it was heard yet.
        if (yielded) break;
      }
    }
    if (facts.voiceIndex >= deps.voices.length) {
      facts.fatal = true;
      sink.endSegment(segment);
      throw new SpeechUnavailable('no voice left');
    }
    sink.endSegment(segment);
  }

  const splitter = new SentenceSplitter();
  try {
    if (request.text !== undefined) {
      for (const s of splitter.push(`${request.text} `)) enqueue(s, 0);
    } else {
      await converse(request.messages ?? []);
    }
  } catch (error) {
    if (!isAbort(error, signal)) throw error;
  } finally {
    const held = splitter.flush();
    if (held && !signal.aborted) enqueue(held, facts.rounds.length ? facts.rounds.length - 1 : 0);
    else if (held) facts.pending = held;
    doneProducing();
  }

  try {
    await speaker;
  } catch (error) {
    if (!(error instanceof SpeechUnavailable) && !isAbort(error, signal)) throw error;
  }
  // Whatever the speaker never reached is unheard.
  if (queue.length) facts.pending = [...queue.map((q) => q.text), facts.pending].filter(Boolean).join(' ');
  // Played ms are final once every segment has played to its end mark or been cleared.
  await Promise.all(facts.segments.map((s) => sink.segmentDone(s.segment)));
  for (const s of facts.segments) {
    s.audioMs = sink.audioMs(s.segment);
    s.playedMs = sink.playedMs(s.segment);
    const first = sink.firstFrameAt(s.segment);
    s.startedAtMs = first;
    if (first !== null && (facts.firstFrameAtMs === null || first < facts.firstFrameAtMs)) facts.firstFrameAtMs = first;
  }
  facts.interrupted = signal.aborted;

  if (request.turnEndMs !== undefined && facts.firstFrameAtMs !== null) {
    const sttMs = Math.max(0, Math.round(request.sttMs ?? 0));
    const llmFirstTokenMs = firstTextAt === null ? 0 : Math.max(0, firstTextAt - startedAt);
    const ttsFirstByteMs =
      firstAudioAt === null || firstSentenceSentAt === null ? 0 : Math.max(0, firstAudioAt - firstSentenceSentAt);
    const totalMs = Math.max(0, facts.firstFrameAtMs - request.turnEndMs);
    facts.latency = {
      sttMs,
      llmFirstTokenMs,
      ttsFirstByteMs,
      overheadMs: Math.max(0, totalMs - sttMs - llmFirstTokenMs - ttsFirstByteMs),
      totalMs,
    };
  }
  return facts;

  async function converse(initial: ChatMessage[]) {
    const messages = [...initial];
    let retries = 1;
    const maxRounds = deps.maxToolRounds ?? 5;
    for (let round = 0; round <= maxRounds; round++) {
      const calls: ChatToolCall[] = [];
      let roundText = '';
      let saidSomething = false;
      try {
        for await (const delta of stream(messages)) {
          if (delta.type === 'text' && delta.text) {
            if (firstTextAt === null) firstTextAt = clock.now();
            roundText += delta.text;
            saidSomething = true;
            for (const s of splitter.push(delta.text)) enqueue(s, round);
          } else if (delta.type === 'tool_call') {
            saidSomething = true;
            calls.push(delta.call);
          }
        }
      } catch (error) {
        if (isAbort(error, signal)) throw error;
        facts.errors.push(describe(error, deps.model.name));
        if (!saidSomething && retries > 0) {
          retries--;
          round--;
          continue;
        }
        // The apology is said as any text is: sentence by sentence.
        if (!saidSomething)
          for (const sentence of splitter.push(`${deps.apology ?? DEFAULT_APOLOGY} `)) enqueue(sentence, round);
        return;
      }
      const held = splitter.flush();
      if (held) enqueue(held, round);
      if (!calls.length || round === maxRounds) return;
      // The round's calls that ran are kept even when a later one is cut: they happened.
      const results: HistoryToolCall[] = [];
      facts.rounds[round] = { toolCalls: results };
      let stop = false;
      // Lines a tool says (a custom tool's `speak` while it runs, a pathway step's `say` it arrived at), as any text is.
      const sayLine = (text: string) => {
        for (const s of splitter.push(`${text} `)) enqueue(s, round);
        const rest = splitter.flush();
        if (rest) enqueue(rest, round);
      };
      for (const call of calls) {
        const atMs = clock.now() - deps.callStartMs;
        const running = deps.tools.call(call.function.name, call.function.arguments, signal, { say: sayLine });
        let settled: Awaited<typeof running>;
        try {
          settled = await untilAborted(running, signal);
        } catch (error) {
          if (signal.aborted && deps.tools.completesOnBargeIn(call.function.name))
            facts.lateToolCalls.push({ call, round, atMs, settled: running });
          throw error;
        }
        const record: ToolCallRecord = {
          name: call.function.name,
          arguments: settled.arguments,
          result: settled.result,
          atMs,
        };
        facts.toolCalls.push(record);
        deps.onToolCall?.(record);
        results.push({ call, result: JSON.stringify(settled.result) });
        for (const line of settled.say ?? []) sayLine(line);
        if (settled.stop) stop = true;
      }
      messages.push({ role: 'assistant', content: roundText || null, tool_calls: calls });
      for (const r of results) messages.push({ role: 'tool', tool_call_id: r.call.id, content: r.result });
      // The call's pathway has ended (an end or transfer step, a failed walk): its last lines are said, the model is not asked again.
      if (stop) return;
    }
  }

  /** One model attempt; fails with a ProviderFailure when no delta comes within the deadline. */
  async function* stream(messages: ChatMessage[]): AsyncGenerator<ModelDelta> {
    const attempt = new AbortController();
    const onAbort = () => attempt.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      const iterator = deps.model
        .complete({ ...modelRequest(messages, deps.systemPrompt?.(), deps.tools), signal: attempt.signal })
        [Symbol.asyncIterator]();
      const deadlineMs = deps.llmDeadlineMs ?? 4000;
      let first = true;
      for (;;) {
        let next: IteratorResult<ModelDelta>;
        if (first) {
          const pending = iterator.next();
          pending.catch(() => {});
          const deadline = new AbortController();
          const timeout = sleep(clock, deadlineMs, deadline.signal).then(() => {
            const failure = new ProviderFailure(deps.model.name, `no answer within ${deadlineMs} ms`);
            attempt.abort(failure);
            throw failure;
          });
          timeout.catch(() => {});
          try {
            next = await untilAborted(Promise.race([pending, timeout]), attempt.signal);
          } finally {
            deadline.abort();
          }
          first = false;
        } else next = await untilAborted(iterator.next(), attempt.signal);
        if (signal.aborted) throw signal.reason;
        if (next.done) return;
        yield next.value;
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      if (!attempt.signal.aborted) attempt.abort();
    }
  }
}
