// Text mode of an agent test (DESIGN.md "Agent tests"): the caller's lines go
// to the call's own turn logic as text. The same CallAgent (pathway walk,
// built-in and custom tools), the same History and the same runReply (model
// rounds, tool calls, retry and apology) as a live call; only the sink and
// the voice differ: a reply's sentences are written as text, each heard in
// full as soon as it is said. No audio, speech or carrier.
import type { TimerClock } from '../../lib/clock.js';
import type { AssembledCall } from '../../providers/audio/interface.js';
import type { CallSpeech } from '../../providers/call-speech/interface.js';
import type { LanguageModel } from '../../providers/language-model/interface.js';
import type { PathwayDocument } from '../pathways/schemas.js';
import { PathwayWalker } from '../pathways/walker.js';
import { CallAgent, type CallCustomTool, type CustomToolInvoker, type PathwayEffects } from '../voice/call-agent.js';
import { heardText } from '../voice/heard-text.js';
import { History } from '../voice/history.js';
import { type ReplySink, runReply } from '../voice/reply.js';
import { offeredTools, type ToolCallRecord, ToolRegistry, type ToolServices } from '../voice/tools.js';
import type { Conversation } from './checks.js';
import { nextSlice } from './slices.js';

/** Every sentence is "said" as one sample of silence: the reply's logic runs, nothing is synthesised. */
const TEXT_SPEECH: CallSpeech = {
  name: 'text',
  async *synthesize() {
    yield new Int16Array(1);
  },
};

/** A sink where each segment is heard whole as soon as it is written. */
class TextSink implements ReplySink {
  private next = 1;
  private readonly segments = new Map<number, { firstAt: number | null; onFirst?: (atMs: number) => void }>();
  constructor(private readonly clock: TimerClock) {}
  startSegment(onFirstFrame?: (atMs: number) => void): number {
    const id = this.next++;
    this.segments.set(id, { firstAt: null, onFirst: onFirstFrame });
    return id;
  }
  write(segment: number): void {
    const s = this.segments.get(segment);
    if (!s || s.firstAt !== null) return;
    s.firstAt = this.clock.now();
    s.onFirst?.(s.firstAt);
  }
  endSegment(): void {}
  segmentDone(): Promise<void> {
    return Promise.resolve();
  }
  audioMs(segment: number): number {
    return this.segments.get(segment)?.firstAt === null ? 0 : 1;
  }
  playedMs(segment: number): number {
    return this.audioMs(segment);
  }
  firstFrameAt(segment: number): number | null {
    return this.segments.get(segment)?.firstAt ?? null;
  }
}

export interface TextConversationOptions {
  call: AssembledCall;
  model: LanguageModel;
  /** The tools' services of this call (knowledge, calendar: sandboxed unless the test's side effects are live). */
  services: ToolServices;
  /** Custom HTTP tools and webhook nodes: null when the test does not send them (sandbox side effects). */
  invoker: CustomToolInvoker | null;
  webhook: PathwayEffects['webhook'];
  clock: TimerClock;
  llmDeadlineMs?: number;
}

type Ending = { outcome: string; reason: string };

export class TextConversation {
  private readonly history: History;
  private readonly agent: CallAgent;
  private readonly startMs: number;
  private readonly transcript: Conversation['transcript'] = [];
  private readonly toolCalls: ToolCallRecord[] = [];
  private readonly sink: TextSink;
  private readonly controller = new AbortController();
  private ending: Ending | null = null;
  private pendingHangUp = false;
  private readonly warnings: string[] = [];

  constructor(private readonly options: TextConversationOptions) {
    const { call, clock } = options;
    this.startMs = clock.now();
    this.sink = new TextSink(clock);
    this.history = new History(call.systemPrompt);
    const services = options.services;
    const builtins = new ToolRegistry(
      {
        searchKnowledge: (q, s) => services.searchKnowledge!(q, s),
        checkAvailability: (d, s) => services.checkAvailability!(d, s),
        bookMeeting: (i, s) => services.bookMeeting!(i, s),
        transferToHuman: async (id, s) => {
          const result = await services.transferToHuman!(id, s);
          if (result.ok) this.ending ??= { outcome: 'transferred', reason: 'transferred' };
          return result;
        },
        endCall: () => {
          this.pendingHangUp = true;
        },
      },
      offeredTools(services),
    );
    const pathway = call.pathway;
    const walker = pathway
      ? new PathwayWalker({
          document: pathway.document as unknown as PathwayDocument,
          id: pathway.id,
          variables: call.variables ?? {},
          contact: { name: call.contact?.name ?? 'test caller', phone: null },
          clock,
          callStartMs: this.startMs,
        })
      : null;
    this.agent = new CallAgent({
      systemPrompt: call.systemPrompt,
      walker,
      builtins,
      customTools: (call.customTools ?? []) as unknown as CallCustomTool[],
      invoker: options.invoker,
      sandbox: options.model.sandbox,
      clock,
      callStartMs: this.startMs,
      variables: { ...(call.variables ?? {}) },
      onToolCall: (record) => this.toolCalls.push(record),
      effects: {
        webhook: options.webhook,
        digits: async () => {},
        sms: async () => {},
        transfer: async (humanAgentId) => {
          const transfer = services.transferToHuman;
          const result = transfer
            ? await transfer(humanAgentId, this.controller.signal)
            : { ok: false, message: 'nobody to transfer to' };
          if (result.ok) this.ending ??= { outcome: 'transferred', reason: 'transferred' };
          return result;
        },
        end: () => {
          this.pendingHangUp = true;
        },
        failed: (message) => {
          this.ending ??= { outcome: 'pathway_error', reason: message };
        },
        move: () => {},
        warn: (message) => this.warnings.push(message),
      },
    });
  }

  /** The conversation is over (the agent hung up or transferred, the pathway ended, a provider failed). */
  get ended(): boolean {
    return this.ending !== null;
  }

  /** The conversation's lines so far. */
  get lines(): Conversation['transcript'] {
    return [...this.transcript];
  }

  /** The agent's first words: the pathway start's lines, else the first message. */
  async start(): Promise<void> {
    const lines = await this.agent.start(this.controller.signal);
    const greeting = lines.length ? lines.join(' ') : this.options.call.firstMessage;
    if (greeting) this.agentSaid([greeting], null);
    this.settle();
  }

  /** One caller turn: what the turn logic does before the model, then the model with the call's tools until it answers in text. */
  async turn(text: string): Promise<void> {
    if (this.ended) return;
    // A turn of the event loop of its own (slices.ts): the API's other users keep their latency.
    await nextSlice();
    // Latency is wall time (the model's and the tools' own), whatever clock the call runs on.
    const turnStart = performance.now();
    this.transcript.push({ role: 'caller', text });
    this.history.addCaller(text);
    const plan = await this.agent.callerTurn(text, { signal: this.controller.signal });
    if (plan.say.length) this.agentSaid(plan.say, Math.round(performance.now() - turnStart));
    if (plan.askModel && !this.ended && !this.pendingHangUp) await this.ask(turnStart);
    this.settle();
  }

  private async ask(turnStart: number) {
    const { clock, model } = this.options;
    const facts = await runReply(
      {
        model,
        tools: this.agent.tools,
        systemPrompt: () => this.agent.systemPrompt(),
        voices: [{ speech: TEXT_SPEECH, voice: { provider: 'text', voiceId: 'text' } }],
        sink: this.sink,
        clock,
        callStartMs: this.startMs,
        llmDeadlineMs: this.options.llmDeadlineMs,
        onToolCall: (record) => this.toolCalls.push(record),
      },
      { signal: this.controller.signal, messages: this.history.messages() },
    );
    const heard = heardText(facts.segments, facts.pending);
    const roundCount = Math.max(facts.rounds.length, ...facts.segments.map((s) => s.round + 1), 0);
    this.history.addAgent(
      Array.from({ length: roundCount }, (_, r) => ({
        text: heard.rounds.find((h) => h.round === r)?.text ?? '',
        toolCalls: facts.rounds[r]?.toolCalls ?? [],
      })),
      false,
    );
    if (heard.text) this.record(heard.text, Math.round(performance.now() - turnStart));
    if (facts.errors.filter((e) => e.provider === model.name).length >= 2)
      this.ending ??= { outcome: 'provider_error', reason: facts.errors.at(-1)!.message };
  }

  /** Lines the turn logic said itself (a step's `say`, a tool's line): in the history as the agent's. */
  private agentSaid(lines: string[], latencyMs: number | null) {
    const text = lines.join(' ');
    this.history.addAgent([{ text, toolCalls: [] }], false);
    this.record(text, latencyMs);
  }

  private record(text: string, latencyMs: number | null) {
    const node = this.agent.node;
    this.transcript.push({
      role: 'agent',
      text,
      ...(latencyMs !== null ? { latencyMs } : {}),
      ...(node ? { node } : {}),
    });
  }

  /** A hang-up asked for during the turn takes effect once its lines are said. */
  private settle() {
    if (this.pendingHangUp) this.ending ??= { outcome: 'completed', reason: 'agent_ended' };
  }

  /** What happened; `callerDone` when the caller ran out of lines, `maxTurns` when the turn limit stopped it. */
  result(end: 'caller_hung_up' | 'max_turns' = 'caller_hung_up'): Conversation {
    this.controller.abort(new Error('the test is over'));
    const ending =
      this.ending ??
      (end === 'max_turns'
        ? { outcome: 'max_duration', reason: 'max_turns' }
        : { outcome: 'completed', reason: 'caller_hung_up' });
    const snapshot = this.agent.snapshot();
    return {
      transcript: this.transcript,
      toolCalls: [...this.toolCalls]
        .sort((a, b) => a.atMs - b.atMs)
        .map(({ name, arguments: args, result }) => ({
          name,
          arguments: args,
          result,
        })),
      outcome: ending.outcome,
      reason: ending.reason,
      ...(snapshot ? { path: snapshot.path.map((p) => p.node), variables: snapshot.variables } : {}),
      ...(!snapshot && Object.keys(this.agent.variables).length ? { variables: this.agent.variables } : {}),
    };
  }

  /** What the walk and the tools warned about (for the result). */
  get warningsSoFar(): string[] {
    return [...this.warnings, ...this.agent.warnings];
  }
}
