// Runs one agent test (DESIGN.md "Agent tests"): the agent assembled as a
// web call would be, its conversation in text mode (text-conversation.ts)
// with the scripted lines or a goal-driven caller, then every expectation
// checked. Integrations run against their sandboxes unless the test's side
// effects are live; custom HTTP tools and webhook nodes are then not sent.
import type { TimerClock } from '../../lib/clock.js';
import type { AssembledCall } from '../../providers/audio/interface.js';
import type { CallFacts } from '../analysis/facts.js';
import type { CallAnalysis } from '../analysis/schemas.js';
import type { AnalysisSettings } from '../analysis/settings.js';
import type { ChatMessage, LanguageModel } from '../../providers/language-model/interface.js';
import { callToolServices, type VoiceToolServices } from '../voice-agent/runner.js';
import type { CustomToolService, HttpTool } from '../custom-tools/service.js';
import type { CustomToolInvoker, PathwayEffects } from '../voice/call-agent.js';
import { type Conversation, runChecks } from './checks.js';
import type { AgentTestInput, Check } from './schemas.js';
import { TextConversation } from './text-conversation.js';
import { type VoiceConversationDeps, voiceConversation } from './voice-conversation.js';

/** Without maxTurns a goal-driven caller stops after this many turns. */
export const GOAL_CALLER_MAX_TURNS = 12;
/** The goal caller says this when it has what it came for. */
export const GOAL_DONE = '[DONE]';

export interface TestRunnerDeps {
  /** The agent of a test as a call: WebCalls.assemble (404 for what is not the user's). */
  assemble(userId: string, test: AgentTestInput): Promise<AssembledCall>;
  model: LanguageModel;
  llmDeadlineMs?: number;
  /** What tools act on: `sandbox` (scheduling against the sandbox calendar) and `live` (as on a call). */
  tools: { sandbox: VoiceToolServices; live: VoiceToolServices };
  /** Voice mode: web calls of the test's agent, their records, the caller's voice. */
  voice?: VoiceConversationDeps;
  /** Custom HTTP tools and webhook nodes as a call sends them (signed, filtered): live side effects only. */
  customTools?: Pick<CustomToolService, 'invoke' | 'callWebhook'>;
  clock: TimerClock;
  /** The post-call analysis of a conversation (AnalysisService.analysis: the model's, or the sandbox analyser's). */
  analyse?(facts: CallFacts, settings: AnalysisSettings): Promise<CallAnalysis>;
}

export interface TestOutcome {
  status: 'passed' | 'failed' | 'error';
  checks: Check[];
  conversation: Conversation | null;
  error?: string;
  warnings: string[];
}

const NOT_SENT = 'not sent: agent tests call webhooks and custom tools only with sideEffects "live"';

export class TestRunner {
  constructor(private readonly deps: TestRunnerDeps) {}

  async run(userId: string, test: AgentTestInput, signal: AbortSignal): Promise<TestOutcome> {
    const call = await this.deps.assemble(userId, test);
    if (test.mode === 'voice') return this.runVoice(userId, test, call, signal);
    const live = test.sideEffects === 'live';
    const services = callToolServices(
      userId,
      call.context ?? {},
      live ? this.deps.tools.live : this.deps.tools.sandbox,
      async () => ({
        ok: false,
        message: 'nobody to transfer to',
      }),
    );
    const sender = live ? (this.deps.customTools ?? null) : null;
    // What the receiving server is told of the "call": a web call with no numbers.
    const info = { session_id: 'agent-test', direction: 'web' as const, from: null, to: null };
    const invoker: CustomToolInvoker | null = sender
      ? {
          invoke: async (tool, args, variables, signal) => {
            const outcome = await sender.invoke(userId, tool as unknown as HttpTool, args, info, variables, { signal });
            return outcome.ok
              ? { ok: true, result: outcome.result, assigned: outcome.assigned }
              : { ok: false, error: outcome.error };
          },
        }
      : null;
    const webhook: PathwayEffects['webhook'] = sender
      ? async (effect, variables, signal) => {
          const sent = await sender.callWebhook(userId, effect, info, variables, { signal });
          return sent.ok ? { ok: true, result: sent.result } : { ok: false, error: sent.error };
        }
      : async () => ({ ok: false, error: NOT_SENT });
    const conversation = new TextConversation({
      call,
      model: this.deps.model,
      services,
      invoker: invoker ?? (call.customTools?.length ? notSentInvoker : null),
      webhook,
      clock: this.deps.clock,
      llmDeadlineMs: this.deps.llmDeadlineMs,
    });
    await conversation.start();
    const maxTurns = test.expect.maxTurns;
    let end: 'caller_hung_up' | 'max_turns' = 'caller_hung_up';
    if ('lines' in test.caller) {
      for (const [i, line] of test.caller.lines.entries()) {
        signal.throwIfAborted();
        if (conversation.ended) break;
        if (maxTurns !== undefined && i >= maxTurns) {
          end = 'max_turns';
          break;
        }
        await conversation.turn(line);
      }
    } else {
      end = await this.goalCaller(test, conversation, signal, maxTurns ?? GOAL_CALLER_MAX_TURNS);
    }
    const result = conversation.result(end);
    await this.analyseFor(test, call, result);
    const checks = runChecks(test.expect, result);
    return {
      status: checks.every((c) => c.passed) ? 'passed' : 'failed',
      checks,
      conversation: result,
      warnings: conversation.warningsSoFar,
    };
  }

  /** Voice mode: the lines spoken into a web call at real pace; the checks read its record. */
  private async runVoice(
    userId: string,
    test: AgentTestInput,
    call: AssembledCall,
    signal: AbortSignal,
  ): Promise<TestOutcome> {
    if (!this.deps.voice) throw new Error('voice mode is not available on this server');
    const lines = 'lines' in test.caller ? test.caller.lines : [];
    const max = test.expect.maxTurns;
    const result = await voiceConversation(
      this.deps.voice,
      userId,
      test,
      max !== undefined ? lines.slice(0, max) : lines,
      signal,
    );
    if (max !== undefined && lines.length > max && result.outcome === 'completed' && result.reason !== 'agent_ended')
      result.reason = 'max_turns';
    await this.analyseFor(test, call, result);
    const checks = runChecks(test.expect, result);
    return { status: checks.every((c) => c.passed) ? 'passed' : 'failed', checks, conversation: result, warnings: [] };
  }

  /** Analysed as a call is once it ends, when the test looks at it (it may cost a model request). */
  private async analyseFor(test: AgentTestInput, call: AssembledCall, result: Conversation) {
    if (!test.expect.analysis || !this.deps.analyse) return;
    const analysis = await this.deps.analyse(this.facts(call, result), call.agent.analysis ?? {});
    result.analysis = analysis as Conversation['analysis'];
  }

  /** What an analyser reads of a call, from the test's conversation. */
  private facts(call: AssembledCall, c: Conversation): CallFacts {
    const variables = Object.fromEntries(
      Object.entries(c.variables ?? {}).filter((e): e is [string, string | number | boolean] =>
        ['string', 'number', 'boolean'].includes(typeof e[1]),
      ),
    );
    return {
      sessionId: 'agent-test',
      agent: { name: call.agent.name, ...(call.agent.id ? { id: call.agent.id } : {}) },
      contact: { name: call.contact?.name },
      direction: 'web',
      status: 'completed',
      outcome: c.outcome,
      durationSeconds: 0,
      endedAt: this.deps.clock.now(),
      transcript: c.transcript.map((l) => ({
        role: l.role,
        text: l.text,
        ...(l.latencyMs !== undefined ? { latencyMs: l.latencyMs } : {}),
      })),
      toolCalls: c.toolCalls.map((t) => ({ name: t.name, arguments: t.arguments, result: t.result })),
      variables,
    };
  }

  /**
   * A model plays the caller: it is told the goal (and persona) and sees the
   * conversation with the roles turned round; it says GOAL_DONE when it has
   * what it came for. Runs until then, the agent's end of the call, or the turn limit.
   */
  private async goalCaller(
    test: AgentTestInput,
    conversation: TextConversation,
    signal: AbortSignal,
    maxTurns: number,
  ): Promise<'caller_hung_up' | 'max_turns'> {
    const caller = test.caller as { goal: string; persona?: string };
    const system = [
      'You are a person phoning a business. Speak as the caller, one short turn at a time, in plain words.',
      caller.persona ? `Who you are: ${caller.persona}` : '',
      `Your goal: ${caller.goal}`,
      `When your goal is reached, or cannot be reached, answer only ${GOAL_DONE}.`,
    ]
      .filter(Boolean)
      .join('\n');
    for (let turn = 0; turn < maxTurns; turn++) {
      signal.throwIfAborted();
      if (conversation.ended) return 'caller_hung_up';
      const messages: ChatMessage[] = [
        { role: 'system', content: system },
        ...conversation.lines.map(
          (l): ChatMessage =>
            l.role === 'agent' ? { role: 'user', content: l.text } : { role: 'assistant', content: l.text },
        ),
      ];
      let text = '';
      for await (const delta of this.deps.model.complete({ messages, tools: [], signal }))
        if (delta.type === 'text') text += delta.text;
      text = text.trim();
      if (!text || text.includes(GOAL_DONE)) return 'caller_hung_up';
      await conversation.turn(text);
    }
    return 'max_turns';
  }
}

/** Custom tools of a test whose side effects are sandboxed: the model sees them and is told they were not sent. */
const notSentInvoker: CustomToolInvoker = {
  invoke: async () => ({ ok: false, error: NOT_SENT }),
};
