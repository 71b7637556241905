// Builds the agent tests area: the store, the runner (the agent assembled as
// a web call is, with the call's model and tools, free; tools against the
// sandbox calendar unless a test's side effects are live; voice tests speak
// with the offline caller voice) and the service, whose test jobs run on the
// server's job queue. Route modules receive `agentTests` only.
import { type Clock, type TimerClock, systemClock } from '../../lib/clock.js';
import { OfflineCallerVoice } from '../../providers/call-speech/offline-caller.js';
import type { LanguageModel } from '../../providers/language-model/interface.js';
import { SandboxDialogue } from '../../providers/language-model/sandbox.js';
import type { AnalysisService } from '../analysis/service.js';
import type { CallViews } from '../calls/call-views.js';
import type { EventRecorder } from '../events/recorder.js';
import type { IntegrationService } from '../integrations/service.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { Core } from '../platform/core.js';
import { createVoiceToolServices } from '../voice-agent/tools.js';
import type { WebCalls } from '../voice-agent/web-calls.js';
import { TestRunner, type TestRunnerDeps } from './runner.js';
import { AgentTestService } from './service.js';
import { AgentTestStore } from './store.js';

export interface AgentTestServiceDepsIn extends Pick<Core, 'db' | 'dialect' | 'jobs' | 'secretBox'> {
  /** Conversations run at real pace on a clock with timers (the system clock when the given one has none). */
  clock: Clock;
  events: { eventRecorder: EventRecorder };
  /**
   * The voice agent: web calls assemble a test's agent (and carry voice tests); its configured model
   * (LLM_URL; null: the sandbox dialogue) and the model's deadline.
   */
  voice: {
    webCalls: Pick<WebCalls, 'assemble' | 'start'>;
    providers: { languageModel: LanguageModel | null; llmDeadlineMs?: number };
  };
  /** A voice test's record (transcript, tool calls, outcome): the calls area's views. */
  calls: { views: Pick<CallViews, 'get'> };
  knowledge: Pick<KnowledgeService, 'search'>;
  integrations: Pick<IntegrationService, 'invoke'>;
  /** The same integrations against the sandbox calendar (the integrations area's): a test books nothing real. */
  sandboxIntegrations: Pick<IntegrationService, 'invoke'>;
  settings?: { maxRunsPerUser: number; concurrency: number };
  /** Custom HTTP tools and webhook nodes, sent only for tests with sideEffects "live". */
  customTools?: TestRunnerDeps['customTools'];
  /** The post-call analysis of a conversation (the analysis area's). */
  analysis?: { analysis: Pick<AnalysisService, 'analysis'> };
}

export function createAgentTestServices(deps: AgentTestServiceDepsIn) {
  const clock: TimerClock = 'setTimeout' in deps.clock ? (deps.clock as TimerClock) : systemClock;
  const { webCalls, providers } = deps.voice;
  const model = providers.languageModel ?? new SandboxDialogue({ clock: deps.clock });
  const settings = deps.settings ?? { maxRunsPerUser: 20, concurrency: 8 };
  const analysis = deps.analysis?.analysis;
  const callerVoice = offlineCallerVoice();
  const runner = new TestRunner({
    assemble: (userId, test) => webCalls.assemble(userId, test),
    model,
    llmDeadlineMs: providers.llmDeadlineMs,
    tools: {
      sandbox: createVoiceToolServices(deps.knowledge, deps.sandboxIntegrations),
      live: createVoiceToolServices(deps.knowledge, deps.integrations),
    },
    clock,
    ...(analysis ? { analyse: (facts, analysisSettings) => analysis.analysis(facts, analysisSettings) } : {}),
    ...(deps.customTools ? { customTools: deps.customTools } : {}),
    voice: {
      startWebCall: (userId, input) => webCalls.start(userId, input),
      callView: (userId, id) => deps.calls.views.get(userId, id),
      get callerVoice() {
        return callerVoice();
      },
    },
  });
  const agentTests = new AgentTestService({
    store: new AgentTestStore(deps.db),
    db: deps.db,
    dialect: deps.dialect,
    jobs: deps.jobs,
    runner,
    events: deps.events.eventRecorder,
    secretBox: deps.secretBox,
    clock,
    modelConfigured: !model.sandbox,
    maxRunsPerUser: settings.maxRunsPerUser,
    concurrency: settings.concurrency,
  });
  return { agentTests };
}

export type AgentTestServices = ReturnType<typeof createAgentTestServices>;

/** The caller voice of agent tests' voice mode, made when first asked for (once per app). */
function offlineCallerVoice(): () => OfflineCallerVoice | null {
  let voice: OfflineCallerVoice | null | undefined;
  // flite's slt speaks at 16 kHz, as a browser's microphone sends; espeak-ng when flite is not installed.
  return () =>
    (voice ??= OfflineCallerVoice.create({ synthesizer: 'flite', voice: 'slt' }) ?? OfflineCallerVoice.create());
}
