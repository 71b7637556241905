// Every migration in the order it runs (sorted by name). Listed here, not read
// from the folder at start, so the server can run as one bundle (scripts/bundle.mjs);
// test/db/migrate.test.ts fails when a file of this folder is missing here.
import type { Kysely } from 'kysely';
import type { Dialect } from '../database.js';
import * as m00 from './20261122_001_platform_accounts.js';
import * as m01 from './20261122_002_events.js';
import * as m02 from './20261122_003_data.js';
import * as m03 from './20261122_004_partial_object_indexes.js';
import * as m04 from './20261123_005_idempotency.js';
import * as m05 from './20261123_010_billing.js';
import * as m06 from './20261123_020_knowledge.js';
import * as m07 from './20261123_030_personas.js';
import * as m08 from './20261123_040_telephony.js';
import * as m09 from './20261123_050_connect.js';
import * as m10 from './20261123_060_operations.js';
import * as m11 from './20261123_070_calls.js';
import * as m12 from './20261123_100_sessions.js';
import * as m13 from './20261123_110_temporary_sessions.js';
import * as m14 from './20261123_130_knowledge_index_version.js';
import * as m15 from './20261123_140_idempotency_headers.js';
import * as m16 from './20261123_150_single_use_tokens.js';
import * as m17 from './20261125_210_call_and_sms_charges.js';
import * as m18 from './20261125_220_billing_plan_changes.js';
import * as m19 from './20261125_240_voice_agent.js';
import * as m20 from './20261126_300_inline_ciphertext.js';
import * as m21 from './20261202_400_call_media_window.js';
import * as m510 from './20261203_510_call_analysis.js';
import * as m30 from './20261203_530_agent_tests.js';
import * as m520 from './20261203_520_campaigns.js';
import * as m540 from './20261203_540_analytics_scan.js';
import * as m550 from './20261207_550_campaign_contacts_calling.js';

export interface DialectMigration {
  up(db: Kysely<any>, dialect: Dialect): Promise<void>;
}

export const MIGRATIONS: ReadonlyArray<{ name: string; migration: DialectMigration }> = [
  { name: '20261122_001_platform_accounts', migration: m00 },
  { name: '20261122_002_events', migration: m01 },
  { name: '20261122_003_data', migration: m02 },
  { name: '20261122_004_partial_object_indexes', migration: m03 },
  { name: '20261123_005_idempotency', migration: m04 },
  { name: '20261123_010_billing', migration: m05 },
  { name: '20261123_020_knowledge', migration: m06 },
  { name: '20261123_030_personas', migration: m07 },
  { name: '20261123_040_telephony', migration: m08 },
  { name: '20261123_050_connect', migration: m09 },
  { name: '20261123_060_operations', migration: m10 },
  { name: '20261123_070_calls', migration: m11 },
  { name: '20261123_100_sessions', migration: m12 },
  { name: '20261123_110_temporary_sessions', migration: m13 },
  { name: '20261123_130_knowledge_index_version', migration: m14 },
  { name: '20261123_140_idempotency_headers', migration: m15 },
  { name: '20261123_150_single_use_tokens', migration: m16 },
  { name: '20261125_210_call_and_sms_charges', migration: m17 },
  { name: '20261125_220_billing_plan_changes', migration: m18 },
  { name: '20261125_240_voice_agent', migration: m19 },
  { name: '20261126_300_inline_ciphertext', migration: m20 },
  { name: '20261202_400_call_media_window', migration: m21 },
  { name: '20261203_510_call_analysis', migration: m510 },
  { name: '20261203_520_campaigns', migration: m520 },
  { name: '20261203_530_agent_tests', migration: m30 },
  { name: '20261203_540_analytics_scan', migration: m540 },
  { name: '20261207_550_campaign_contacts_calling', migration: m550 },
];
