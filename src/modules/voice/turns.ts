// Turn-taking, pure: events with their times in, decisions out. No clock, no
// I/O: the session feeds it speech edges from the VAD, recognition results,
// the agent's state and ticks, and acts on what comes back.
//
// Rules (numbers in TurnSettings, defaults from DESIGN "Voice agent"):
// - end of turn: the caller is silent and has said words. A final transcript
//   ending a sentence (. ? !) ends the turn after endpointMinMs of silence;
//   one ending on a word that leads on ("and", "the", "um" …) after
//   endpointMaxMs; any other final after twice endpointMinMs; only interim
//   words after endpointMaxMs. Speech with no words at all is dropped at
//   endpointMaxMs (after the final, when the recogniser transcribes per
//   utterance). A per-utterance recogniser answers each utterance the VAD cut
//   once: the turn waits for the answer of every one of them, not only the
//   first to come back (a comma pause cuts "Hello, who is this?" in two, and
//   the answer for "Hello" must not end the turn while "who is this" is being
//   transcribed).
// - unclear words: a final the session marks `unclear` (a recogniser's low
//   confidence) is in the caller's line followed by "(unclear)", and the model
//   gets "(unclear)" in its place: words nobody is sure of are not acted on.
// - barge-in: the caller has spoken for bargeInMs while the agent replies
//   (thinking or speaking). Shorter sounds while the agent replies (a cough,
//   "mm-hm") are not a turn: their words are dropped.
// - false interruption: no recognised word within falseInterruptionMs of a
//   barge-in → the agent resumes from the cut (a per-utterance recogniser:
//   not while the caller still speaks or its utterance is being transcribed).
// - reprompt: repromptMs after the agent went quiet (last acknowledged mark)
//   with no caller speech; after maxReprompts reprompts the next silence ends
//   the call (reason `silence`). Words from the caller reset the count.
// - max duration: the call ends (reason `max_duration`).
// - likely end: every word of the turn is final and the caller is silent, but
//   the endpoint's silence has not run out: `turn_likely` (once per text), so
//   the session can ask the model ahead (docs/decisions/voice-agent.md,
//   "Preemptive model request"). Speaking again makes the text hinted anew.
import { UNCLEAR } from '../../providers/language-model/sandbox.js';

export interface TurnSettings {
  endpointMinMs: number;
  endpointMaxMs: number;
  bargeInMs: number;
  falseInterruptionMs: number;
  repromptMs: number;
  maxReprompts: number;
  maxDurationMs: number;
  /** The recogniser answers once per utterance (after the VAD's cut): wait for its final before dropping a wordless turn. */
  finalPerUtterance: boolean;
}

export const DEFAULT_TURN_SETTINGS: TurnSettings = {
  endpointMinMs: 500,
  endpointMaxMs: 3000,
  bargeInMs: 300,
  falseInterruptionMs: 2000,
  repromptMs: 8000,
  maxReprompts: 2,
  maxDurationMs: 30 * 60_000,
  finalPerUtterance: false,
};

export type TurnEvent =
  | { type: 'speech_start'; atMs: number }
  | { type: 'speech_end'; atMs: number }
  /** `unclear`: a final too unsure to act on (its words are recorded, the model is told "(unclear)"). */
  | { type: 'recognition'; text: string; final: boolean; unclear?: boolean; atMs: number }
  /** replying: a reply (or reprompt, or greeting) started; idle: it is over and its audio played (or was cleared). */
  | { type: 'agent'; state: 'replying' | 'idle'; atMs: number }
  | { type: 'tick'; atMs: number };

export type TurnDecision =
  /** `text`: the caller's line as recognised; `modelText`: what the model is given (unclear words replaced by "(unclear)"). */
  | { type: 'end_of_turn'; text: string; modelText: string; startMs: number; endMs: number; finalAtMs: number | null }
  /** All words final, caller silent, endpoint not yet reached: what end_of_turn's modelText would be now. */
  | { type: 'turn_likely'; modelText: string; atMs: number }
  | { type: 'barge_in'; atMs: number }
  | { type: 'false_interruption'; atMs: number }
  | { type: 'reprompt'; count: number; atMs: number }
  | { type: 'end'; reason: 'silence' | 'max_duration'; atMs: number };

/** How long a per-utterance recogniser may take before its utterance is given up. */
const FINAL_WAIT_MS = 10_000;

const LEADING_ON = new Set([
  'and',
  'but',
  'or',
  'so',
  'because',
  'the',
  'a',
  'an',
  'to',
  'for',
  'of',
  'with',
  'um',
  'uh',
  'er',
  'my',
  'your',
  'is',
  'if',
  'that',
  'in',
  'on',
  'at',
]);

/** Silence needed after the last speech before a turn with this text ends. */
export function endpointDelay(
  text: string,
  final: boolean,
  s: Pick<TurnSettings, 'endpointMinMs' | 'endpointMaxMs'>,
): number {
  const trimmed = text.trim();
  if (!final) return s.endpointMaxMs;
  if (/[.!?]["')\]]*$/.test(trimmed)) return s.endpointMinMs;
  const lastWord =
    trimmed
      .split(/\s+/)
      .pop()
      ?.toLowerCase()
      .replace(/[^a-z']/g, '') ?? '';
  if (LEADING_ON.has(lastWord)) return s.endpointMaxMs;
  return Math.min(s.endpointMaxMs, s.endpointMinMs * 2);
}

export class TurnTaking {
  readonly settings: TurnSettings;
  private agent: 'replying' | 'idle' = 'idle';
  private quietSinceMs: number;
  private inSpeech = false;
  private speechStartMs = 0;
  private lastSpeechEndMs = 0;
  private turnStartMs: number | null = null;
  private finals: Array<{ text: string; unclear: boolean }> = [];
  private interim = '';
  private lastFinalAtMs: number | null = null;
  /**
   * Utterances cut by the VAD whose final a per-utterance recogniser has not
   * given yet, oldest first (it answers in order); `dropped`: the turn they
   * belonged to is gone, so their words are not taken.
   */
  private awaitingFinals: Array<{ dropped: boolean }> = [];
  /** Words heard while the agent replies belong to no turn until a barge-in makes them one. */
  private tentative = false;
  private ignoreUntilSpeech = false;
  private bargedInThisRun = false;
  private bargeIn: { atMs: number } | null = null;
  private reprompts = 0;
  private ended = false;
  /** The modelText of the last turn_likely of this turn. */
  private likelyText: string | null = null;
  /** A final with words came after the caller last started speaking (a streaming recogniser's words of it are in). */
  private finalSinceSpeech = false;

  constructor(
    private readonly callStartMs: number,
    settings: Partial<TurnSettings> = {},
  ) {
    this.settings = { ...DEFAULT_TURN_SETTINGS, ...settings };
    this.quietSinceMs = callStartMs;
  }

  get repromptCount() {
    return this.reprompts;
  }

  update(event: TurnEvent): TurnDecision[] {
    if (this.ended) return [];
    const out: TurnDecision[] = [];
    const now = event.atMs;
    switch (event.type) {
      case 'speech_start':
        this.inSpeech = true;
        this.speechStartMs = event.atMs;
        this.bargedInThisRun = false;
        this.ignoreUntilSpeech = false;
        if (this.turnStartMs === null) this.turnStartMs = event.atMs;
        this.tentative = this.agent === 'replying' && !this.bargeIn;
        this.finalSinceSpeech = false;
        this.likelyText = null;
        break;
      case 'speech_end':
        this.inSpeech = false;
        this.lastSpeechEndMs = event.atMs;
        this.quietSinceMs = Math.max(this.quietSinceMs, event.atMs);
        if (this.tentative) {
          // A short sound over the agent: not a turn.
          this.resetTurn();
          this.ignoreUntilSpeech = true;
        }
        if (this.settings.finalPerUtterance) this.awaitingFinals.push({ dropped: this.ignoreUntilSpeech });
        break;
      case 'recognition': {
        // A per-utterance final answers the oldest utterance still waiting: one of a dropped turn says nothing.
        const answered = event.final ? this.awaitingFinals.shift() : undefined;
        if (this.ignoreUntilSpeech || answered?.dropped) break;
        const text = event.text.trim();
        if (event.final) {
          if (text) {
            this.finals.push({ text, unclear: event.unclear === true });
            this.interim = '';
            this.lastFinalAtMs = event.atMs;
            this.finalSinceSpeech = true;
          }
        } else this.interim = text;
        if (text && this.turnStartMs === null) this.turnStartMs = event.atMs;
        if (text && !this.inSpeech && this.lastSpeechEndMs < (this.turnStartMs ?? event.atMs))
          this.lastSpeechEndMs = event.atMs;
        if (text && this.bargeIn) this.bargeIn = null;
        break;
      }
      case 'agent':
        this.agent = event.state;
        if (event.state === 'idle') this.quietSinceMs = event.atMs;
        break;
      case 'tick':
        break;
    }

    if (now - this.callStartMs >= this.settings.maxDurationMs) {
      this.ended = true;
      return [{ type: 'end', reason: 'max_duration', atMs: now }];
    }

    // Barge-in.
    if (
      this.agent === 'replying' &&
      this.inSpeech &&
      !this.bargedInThisRun &&
      now - this.speechStartMs >= this.settings.bargeInMs
    ) {
      this.bargedInThisRun = true;
      this.tentative = false;
      this.agent = 'idle';
      this.bargeIn = { atMs: now };
      out.push({ type: 'barge_in', atMs: now });
    }

    // False interruption. A per-utterance recogniser (pocketsphinx, Whisper) has no words before the
    // caller stops and it has transcribed: the 2 s run on from there, not through a long sentence.
    const awaiting = this.awaitingFinals.some((u) => !u.dropped);
    const transcribing =
      this.settings.finalPerUtterance && (this.inSpeech || (awaiting && now - this.lastSpeechEndMs < FINAL_WAIT_MS));
    if (
      this.bargeIn &&
      !transcribing &&
      now - this.bargeIn.atMs >= this.settings.falseInterruptionMs &&
      !this.hasWords()
    ) {
      this.bargeIn = null;
      this.resetTurn();
      this.ignoreUntilSpeech = this.inSpeech;
      out.push({ type: 'false_interruption', atMs: now });
      return out;
    }

    // End of turn.
    if (!this.inSpeech && this.agent === 'idle' && this.turnStartMs !== null && !this.tentative) {
      const silence = now - this.lastSpeechEndMs;
      const finalText = this.finals.map((f) => f.text).join(' ');
      if (awaiting && silence < FINAL_WAIT_MS) {
        // The recogniser is still transcribing an utterance of the turn.
      } else if (finalText) {
        const text = this.interim ? `${finalText} ${this.interim}` : finalText;
        if (silence >= endpointDelay(text, !this.interim, this.settings)) out.push(this.endTurn());
        else if (!this.interim && this.finalSinceSpeech) {
          const { modelText } = this.words();
          if (modelText !== this.likelyText) {
            this.likelyText = modelText;
            out.push({ type: 'turn_likely', modelText, atMs: now });
          }
        }
      } else if (this.interim && silence >= this.settings.endpointMaxMs) {
        out.push(this.endTurn());
      } else if (!finalText && !this.interim && !this.bargeIn && silence >= this.settings.endpointMaxMs) {
        this.resetTurn(); // noise: no words
      }
    }

    // Silence: reprompt, then end.
    if (
      this.agent === 'idle' &&
      !this.inSpeech &&
      this.turnStartMs === null &&
      !this.bargeIn &&
      now - this.quietSinceMs >= this.settings.repromptMs
    ) {
      if (this.reprompts >= this.settings.maxReprompts) {
        this.ended = true;
        out.push({ type: 'end', reason: 'silence', atMs: now });
      } else {
        this.reprompts++;
        this.quietSinceMs = now;
        out.push({ type: 'reprompt', count: this.reprompts, atMs: now });
      }
    }
    return out;
  }

  private hasWords() {
    return this.finals.length > 0 || this.interim.length > 0;
  }

  private endTurn(): TurnDecision {
    const decision: TurnDecision = {
      type: 'end_of_turn',
      ...this.words(),
      startMs: this.turnStartMs!,
      endMs: this.lastSpeechEndMs,
      finalAtMs: this.lastFinalAtMs,
    };
    this.reprompts = 0;
    this.resetTurn();
    this.quietSinceMs = decision.endMs;
    return decision;
  }

  /** The turn's words: finals in order (an unclear one marked; for the model, replaced), then the interim. */
  private words(): { text: string; modelText: string } {
    const text: string[] = [];
    const modelText: string[] = [];
    for (const f of this.finals) {
      text.push(f.unclear ? `${f.text} ${UNCLEAR}` : f.text);
      // Unclear words side by side are one "(unclear)" for the model.
      if (!f.unclear) modelText.push(f.text);
      else if (modelText.at(-1) !== UNCLEAR) modelText.push(UNCLEAR);
    }
    if (this.interim) {
      text.push(this.interim);
      modelText.push(this.interim);
    }
    return { text: text.join(' '), modelText: modelText.join(' ') };
  }

  private resetTurn() {
    this.turnStartMs = null;
    this.finals = [];
    this.interim = '';
    this.lastFinalAtMs = null;
    this.likelyText = null;
    this.tentative = false;
    // Finals still awaited belong to the turn just gone (or given up): their words start no new one.
    for (const u of this.awaitingFinals) u.dropped = true;
  }
}
