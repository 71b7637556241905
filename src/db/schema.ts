// The whole database as Kysely sees it: each module declares its own tables
// in its tables.ts and they are joined here.
import type { ApiKeyTables } from '../modules/api-keys/tables.js';
import type { BillingTables } from '../modules/billing/tables.js';
import type { AccountTables } from '../modules/auth/tables.js';
import type { DataTables } from '../modules/data/tables.js';
import type { EventTables } from '../modules/events/tables.js';
import type { ConnectTables } from '../modules/connect/tables.js';
import type { PlatformTables } from '../modules/platform/tables.js';
import type { TelephonyTables } from '../modules/telephony/tables.js';
import type { IntegrationTables } from '../modules/integrations/tables.js';
import type { KnowledgeTables } from '../modules/knowledge/tables.js';
import type { WebhookTables } from '../modules/webhooks/tables.js';
import type { CallTables } from '../modules/calls/tables.js';
import type { TemporarySessionTables } from '../modules/temporary-sessions/tables.js';
import type { AgentTestTables } from '../modules/agent-tests/tables.js';
import type { CampaignTables } from '../modules/campaigns/tables.js';

export interface Database
  extends PlatformTables,
    AccountTables,
    ApiKeyTables,
    EventTables,
    DataTables,
    BillingTables,
    IntegrationTables,
    TelephonyTables,
    KnowledgeTables,
    ConnectTables,
    WebhookTables,
    CallTables,
    TemporarySessionTables,
    CampaignTables,
    AgentTestTables {}
