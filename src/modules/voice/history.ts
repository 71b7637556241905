// The conversation the model sees: only what the caller said and what the
// caller heard. An agent turn cut by a barge-in keeps its heard part, marked
// interrupted (shown to the model with a trailing "…"); text never heard is
// gone. Tool calls that ran stay with their results whatever was heard: they
// happened (a booking made is made), and one that settles after the cut (a
// booking sent before the barge-in) joins its turn when it does: the model is
// told from its next request.
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

/** An agent turn of the history, as addAgent returns it (for tool calls that settle later). */
export interface AgentTurn {
  kind: 'agent';
  /** Indexed by model round; a round with no heard text and no tool call says nothing. */
  rounds: AgentRound[];
  interrupted: boolean;
}

type Entry = { kind: 'caller'; text: string } | AgentTurn;

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

  /**
   * An agent turn: per model round (in order), the heard text and the tool
   * calls that ran. A turn that said and did nothing is left out, unless
   * `lateToolCalls` (a tool call of it still running) will add to it.
   */
  addAgent(rounds: AgentRound[], interrupted: boolean, lateToolCalls = false): AgentTurn {
    const turn: AgentTurn = {
      kind: 'agent',
      rounds: rounds.map((r) => ({ text: r.text, toolCalls: [...r.toolCalls] })),
      interrupted,
    };
    if (lateToolCalls || rounds.some((r) => r.text || r.toolCalls.length)) this.push(turn);
    return turn;
  }

  /** A tool call of `turn` (its model round `round`) that settled after the turn was cut: it ran, so the model is told. */
  addLateToolCall(turn: AgentTurn, round: number, toolCall: HistoryToolCall) {
    while (turn.rounds.length <= round) turn.rounds.push({ text: '', toolCalls: [] });
    turn.rounds[round]!.toolCalls.push(toolCall);
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

  /** The messages as they will be once the caller has said `text` (what a model asked ahead is sent). */
  messagesAfterCaller(text: string): ChatMessage[] {
    const entries: Entry[] = [...this.entries, { kind: 'caller', text }];
    return History.render(this.systemPrompt, entries.slice(-this.maxEntries));
  }

  messages(): ChatMessage[] {
    return History.render(this.systemPrompt, this.entries);
  }

  private static render(systemPrompt: string, entries: Entry[]): ChatMessage[] {
    const out: ChatMessage[] = [{ role: 'system', content: systemPrompt }];
    for (const entry of entries) {
      if (entry.kind === 'caller') {
        out.push({ role: 'user', content: entry.text });
        continue;
      }
      const last = entry.rounds.findLastIndex((r) => r.text || r.toolCalls.length);
      entry.rounds.forEach((round, i) => {
        const text = round.text && entry.interrupted && i === last ? `${round.text}\u2026` : round.text;
        if (round.toolCalls.length) {
          out.push({ role: 'assistant', content: text || null, tool_calls: round.toolCalls.map((t) => t.call) });
          for (const t of round.toolCalls) out.push({ role: 'tool', tool_call_id: t.call.id, content: t.result });
        } else if (text) out.push({ role: 'assistant', content: text });
      });
    }
    return out;
  }
}
