// Builds the agent tests area: the store, the runner (the agent assembled as
// a web call is; tools against the sandbox calendar unless a test's side
// effects are live) and the service, whose test jobs run on the server's job
// queue. Route modules receive `agentTests` only.
import type { Kysely } from 'kysely';
import type { Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { TimerClock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { LanguageModel } from '../../providers/language-model/interface.js';
import type { WebCalls } from '../voice-agent/web-calls.js';
import { createVoiceToolServices } from '../voice-agent/tools.js';
import type { EventRecorder } from '../events/recorder.js';
import type { IntegrationService } from '../integrations/service.js';
import type { KnowledgeService } from '../knowledge/service.js';
import type { JobQueue } from '../platform/jobs.js';
import { TestRunner, type TestRunnerDeps } from './runner.js';
import { AgentTestService } from './service.js';
import { AgentTestStore } from './store.js';

export interface AgentTestServiceDepsIn {
  db: Kysely<Database>;
  dialect: Dialect;
  jobs: JobQueue;
  events: EventRecorder;
  secretBox: SecretBox;
  clock: TimerClock;
  webCalls: Pick<WebCalls, 'assemble'>;
  model: LanguageModel;
  llmDeadlineMs?: number;
  knowledge: Pick<KnowledgeService, 'search'>;
  integrations: Pick<IntegrationService, 'invoke'>;
  /** The same integrations against the sandbox calendar (the composition root builds it): a test books nothing real. */
  sandboxIntegrations: Pick<IntegrationService, 'invoke'>;
  settings: { maxRunsPerUser: number; concurrency: number };
  /** Voice mode (web calls and their records); absent: voice tests end `error`. */
  voice?: TestRunnerDeps['voice'];
  /** Custom HTTP tools and webhook nodes, sent only for tests with sideEffects "live". */
  customTools?: TestRunnerDeps['customTools'];
  /** The post-call analysis of a conversation (the analysis area's). */
  analyse?: TestRunnerDeps['analyse'];
}

export function createAgentTestServices(deps: AgentTestServiceDepsIn) {
  const runner = new TestRunner({
    assemble: (userId, test) => deps.webCalls.assemble(userId, test),
    model: deps.model,
    llmDeadlineMs: deps.llmDeadlineMs,
    tools: {
      sandbox: createVoiceToolServices(deps.knowledge, deps.sandboxIntegrations),
      live: createVoiceToolServices(deps.knowledge, deps.integrations),
    },
    clock: deps.clock,
    ...(deps.analyse ? { analyse: deps.analyse } : {}),
    ...(deps.customTools ? { customTools: deps.customTools } : {}),
    ...(deps.voice ? { voice: deps.voice } : {}),
  });
  const agentTests = new AgentTestService({
    store: new AgentTestStore(deps.db),
    db: deps.db,
    dialect: deps.dialect,
    jobs: deps.jobs,
    runner,
    events: deps.events,
    secretBox: deps.secretBox,
    clock: deps.clock,
    modelConfigured: !deps.model.sandbox,
    maxRunsPerUser: deps.settings.maxRunsPerUser,
    concurrency: deps.settings.concurrency,
  });
  return { agentTests };
}

export type AgentTestServices = ReturnType<typeof createAgentTestServices>;
