// Builds the integrations area's service. Call sessions reach integrations
// through it (functionsFor, invoke), never through its table. Agent tests get
// a twin over the same rows against the sandbox calendar: a test books
// nothing real.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import type { SecretBox } from '../../lib/secret-box.js';
import type { SchedulingProvider } from '../../providers/scheduling/interface.js';
import { SandboxSchedulingProvider } from '../../providers/scheduling/sandbox.js';
import { IntegrationService } from './service.js';
import { IntegrationStore } from './store.js';

export interface IntegrationServiceDeps {
  db: Kysely<Database>;
  /** The calendar provider integrations book through (the sandbox twin books against the sandbox calendar). */
  providers: { scheduling: SchedulingProvider };
  secretBox: SecretBox;
  clock: Clock;
}

export function createIntegrationServices(deps: IntegrationServiceDeps) {
  const store = new IntegrationStore(deps.db);
  return {
    integrations: new IntegrationService(store, deps.providers.scheduling, deps.secretBox, deps.clock),
    sandboxIntegrations: new IntegrationService(store, new SandboxSchedulingProvider(), deps.secretBox, deps.clock),
  };
}

export type IntegrationServices = ReturnType<typeof createIntegrationServices>;
