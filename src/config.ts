// Every environment variable the server reads is declared in src/config/ (one
// file per section: name, parser, default, bounds, doc) and parsed here, once,
// at start. A bad value stops start-up with one error naming every offending
// variable. docs/configuration.md is generated from the same declarations
// (scripts/write-config-docs.ts).
import { type Env, type LoadContext, type Read, type Section, checkUrl } from './config/declare.js';
import {
  billingSection,
  callsSection,
  connectorSection,
  eventsSection,
  knowledgeSection,
  messagingSection,
  personasSection,
  serverSection,
  voiceSection,
} from './config/sections.js';
import { NODE_ENV } from './config/server.js';
import type { AuthSettings, Config } from './config/types.js';

// Rate limits are defined in src/rate-limit-config.ts; re-exported for the callers that read every setting from here.
export { type RateLimitRule, type RateLimits, defaultRateLimits } from './rate-limit-config.js';
export { SANDBOX_TEMPORARY_NUMBERS } from './config/calls.js';
export type {
  AudioConfig,
  AuthSettings,
  BillingSettings,
  Config,
  ConnectorConfig,
  EventStreamConfig,
  ExtractionConfig,
  KnowledgeConfig,
  KnowledgeQuota,
  MediaSocketConfig,
  OidcProviderConfig,
  TemporarySessionConfig,
  VoiceAgentConfig,
  VoiceTimingConfig,
  WebCallConfig,
  WebhookConfig,
} from './config/types.js';

/** Picks the auth area's settings out of the whole configuration. */
export function authSettings(config: Config): AuthSettings {
  const { publicUrl, returnUrlOrigins, sessionTtlSeconds, rememberTtlSeconds, twoFactorPendingTtlSeconds, rateLimits } =
    config;
  return { publicUrl, returnUrlOrigins, sessionTtlSeconds, rememberTtlSeconds, twoFactorPendingTtlSeconds, rateLimits };
}

export class ConfigError extends Error {
  constructor(public readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
  }
}

/** Parses the environment; throws ConfigError listing every bad variable. */
export function loadConfig(env: Env = process.env, cwd = process.cwd()): Config {
  const problems: string[] = [];
  const warnings: string[] = [];
  const problem = (message: string) => {
    problems.push(message);
  };
  const raw = (name: string) => (env[name] ?? '').trim() || null;
  const parsed = new Map<object, unknown>();
  const read: Read = (variable) => {
    if (!parsed.has(variable)) parsed.set(variable, variable.parse(raw(variable.name), problem));
    return parsed.get(variable) as ReturnType<typeof variable.parse>;
  };
  const earlier: Partial<Config> = {};
  const context: LoadContext = {
    nodeEnv: read(NODE_ENV),
    cwd,
    env,
    earlier,
    raw,
    problem,
    problems,
    warn: (message) => {
      warnings.push(message);
    },
    url: (name, value, protocols) => checkUrl(name, value, protocols, problem),
  };
  const run = <T>(section: Section<T>): T => {
    const part = section.load(read, context);
    Object.assign(earlier, part);
    return part;
  };
  const config: Config = {
    ...run(serverSection),
    ...run(eventsSection),
    ...run(messagingSection),
    ...run(billingSection),
    ...run(personasSection),
    ...run(knowledgeSection),
    ...run(connectorSection),
    ...run(callsSection),
    ...run(voiceSection),
    warnings,
  };
  if (problems.length) throw new ConfigError(problems);
  return config;
}
