// The conversation the model sees: only what the caller said and what the
// caller heard. An agent turn cut by a barge-in keeps its heard part, marked
// interrupted (shown to the model with a trailing "…"); text never heard is
// gone. Tool calls that ran stay with their results whatever was heard: they
// happened (a booking made is made).
import type { ChatMessage, ChatToolCall } from '../../providers/language-model/interface.js';

export interface HistoryToolCall {
  call: ChatToolCall;
  /** What the model was told (JSON text). */
  result: string;
}

export interface AgentRound {
  /** Heard text of the round (may be empty). */
  text: string;
  toolCalls: HistoryToolCall[];
}

type Entry = { kind: 'caller'; text: string } | { kind: 'agent'; rounds: AgentRound[]; interrupted: boolean };

export class History {
  private entries: Entry[] = [];

  constructor(
    private readonly systemPrompt: string,
    /** Entries kept (oldest dropped first), so a long call does not outgrow the model's context. */
    private readonly maxEntries = 60,
  ) {}

  addCaller(text: string) {
    this.push({ kind: 'caller', text });
  }

  /** An agent turn: per model round, the heard text and the tool calls that ran. */
  addAgent(rounds: AgentRound[], interrupted: boolean) {
    const kept = rounds.filter((r) => r.text || r.toolCalls.length);
    if (kept.length) this.push({ kind: 'agent', rounds: kept, interrupted });
  }

  private push(entry: Entry) {
    this.entries.push(entry);
    if (this.entries.length > this.maxEntries) this.entries.splice(0, this.entries.length - this.maxEntries);
  }

  /** The last agent turn was cut: for a resumed reply, which continues it. */
  get lastAgentInterrupted() {
    const last = this.entries[this.entries.length - 1];
    return last?.kind === 'agent' && last.interrupted;
  }

  messages(): ChatMessage[] {
    const out: ChatMessage[] = [{ role: 'system', content: this.systemPrompt }];
    for (const entry of this.entries) {
      if (entry.kind === 'caller') {
        out.push({ role: 'user', content: entry.text });
        continue;
      }
      entry.rounds.forEach((round, i) => {
        const lastRound = i === entry.rounds.length - 1;
        const text = round.text && entry.interrupted && lastRound ? `${round.text}…` : round.text;
        if (round.toolCalls.length) {
          out.push({ role: 'assistant', content: text || null, tool_calls: round.toolCalls.map((t) => t.call) });
          for (const t of round.toolCalls) out.push({ role: 'tool', tool_call_id: t.call.id, content: t.result });
        } else if (text) out.push({ role: 'assistant', content: text });
      });
    }
    return out;
  }
}
