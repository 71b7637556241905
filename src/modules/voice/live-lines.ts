// What a live call's listeners see of the agent while it speaks (DESIGN
// "Voice agent": `call_transcript` events and the web call's `transcript`
// message). Each sentence is told when its first frame goes out, not once it
// has played: a live view shows the words as the caller starts hearing them.
// Once the reply is over, the browser gets the reply's line as it was heard
// (the record's line), and a sentence cut by barge-in is followed by its
// heard part, `interrupted: true`.
import type { Heard } from './heard-text.js';
import type { ReplySegment } from './reply.js';
import type { TransportNotice } from './transport.js';

/** One line as listeners get it live (call_transcript). */
export interface LiveLine {
  role: 'agent' | 'caller';
  text: string;
  /** The agent was cut by barge-in: `text` is what was heard of the sentence told before ('' when none of it). */
  interrupted?: true;
}

export class AgentLiveLines {
  /** Sentences of the reply under way told so far. */
  private said: string[] = [];

  constructor(
    private readonly emit: (line: LiveLine) => void,
    private readonly notify: (notice: TransportNotice) => void,
  ) {}

  /** A sentence starts being heard: an event line of its own; the browser's line of the reply grows by it. */
  sentenceStarted(text: string) {
    this.said.push(text);
    this.emit({ role: 'agent', text });
    this.notify({ type: 'transcript', role: 'agent', text: this.said.join(' '), final: false });
  }

  /**
   * The reply is over. `heard` is its heard text (the record's line);
   * `interrupted`: a barge-in cut it, and each told sentence not heard whole
   * gets its heard part (nothing after the cut was heard).
   */
  replyOver(segments: ReplySegment[], heard: Heard, interrupted: boolean) {
    if (!this.said.length) return;
    this.said = [];
    if (interrupted) {
      let marked = false;
      segments.forEach((segment, i) => {
        const part = heard.parts[i] ?? '';
        if (segment.startedAtMs === null || part === segment.text) return;
        this.emit({ role: 'agent', text: part, interrupted: true });
        marked = true;
      });
      // Cut between two sentences (the last one said was heard whole, the next had not started): that one is the line cut.
      const last = segments
        .map((segment, i) => ({ segment, i }))
        .filter(({ segment }) => segment.startedAtMs !== null)
        .at(-1);
      if (!marked && last) this.emit({ role: 'agent', text: heard.parts[last.i] ?? '', interrupted: true });
    }
    this.notify({
      type: 'transcript',
      role: 'agent',
      text: heard.text,
      final: true,
      ...(interrupted ? { interrupted: true } : {}),
    });
  }
}
