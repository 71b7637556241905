// Builds the analysis area: the post-call analysis job (the model when
// LLM_URL is set, else the sandbox analyser), queued after each call is
// accounted for (subscribed to the calls service's call ends here), and the
// analytics counts.
import { availableParallelism } from 'node:os';
import type { Kysely } from 'kysely';
import type { DatabaseHandle, Dialect } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { LanguageModel } from '../../providers/language-model/interface.js';
import type { CallService } from '../calls/service.js';
import { ParameterSchemas } from '../custom-tools/parameters.js';
import type { StoreRecords } from '../data/store-records.js';
import type { EventRecorder } from '../events/recorder.js';
import type { Log } from '../platform/core.js';
import type { JobQueue } from '../platform/jobs.js';
import type { WebhookService } from '../webhooks/service.js';
import { AnalyticsService } from './analytics.js';
import { AnalyticsReaders } from './analytics-readers.js';
import { AnalyticsStore } from './analytics-store.js';
import { ModelAnalyser } from './model-analyser.js';
import { type AnalysedSessions, AnalysisService } from './service.js';

export interface AnalysisServiceDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The analytics store's SQLite aggregate is defined on the connection through it; its readers open its file. */
  database: Pick<DatabaseHandle, 'defineSqliteAggregate' | 'sqliteFile'>;
  clock: Clock;
  /**
   * The calls area: its one store of `call_sessions` (analysis writes its columns through it), what each call
   * was charged (its views) and the calls whose end queues an analysis.
   */
  calls: {
    stores: { sessions: AnalysedSessions };
    views: { chargedCents: (ids: string[]) => Promise<Map<string, number>> };
    calls: Pick<CallService, 'onFinished'>;
  };
  records: StoreRecords;
  events: { eventRecorder: EventRecorder };
  webhooks: Pick<WebhookService, 'enqueue' | 'wake'>;
  jobs: JobQueue;
  /** The voice agent's configured model (LLM_URL); null: the sandbox analyser. */
  voice: { providers: { languageModel: LanguageModel | null } };
  log: Pick<Log, 'error'>;
}

export function createAnalysisServices(deps: AnalysisServiceDeps) {
  const model = deps.voice.providers.languageModel;
  const analysis = new AnalysisService({
    sessions: deps.calls.stores.sessions,
    records: deps.records,
    chargedCents: (ids) => deps.calls.views.chargedCents(ids),
    events: deps.events.eventRecorder,
    webhooks: deps.webhooks,
    jobs: deps.jobs,
    model: model ? new ModelAnalyser(model, new ParameterSchemas()) : null,
    clock: deps.clock,
  });
  deps.calls.calls.onFinished(async (session) => {
    try {
      await analysis.callFinished(session);
    } catch (err) {
      deps.log.error({ err, sessionId: session.id }, 'analysis: the call analysis was not queued');
    }
  });
  // SQLite folds in worker threads of their own (one per core, at most two: a range is read as two halves).
  const file = deps.dialect === 'sqlite' ? deps.database.sqliteFile : null;
  const readers = file ? new AnalyticsReaders(file, Math.min(2, availableParallelism())) : null;
  const analytics = new AnalyticsService(
    new AnalyticsStore(deps.db, deps.dialect, deps.database.defineSqliteAggregate, readers),
    deps.clock,
  );
  return { analysis, analytics, close: async () => readers?.close() };
}

export type AnalysisServices = ReturnType<typeof createAnalysisServices>;
