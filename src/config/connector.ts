// Connector ingestion (POST /api/connect) and paid leads (docs/decisions/connect.md).
import { integer, optional, section, usdAmount } from './declare.js';
import type { ConnectorConfig } from './types.js';

const v = {
  url: optional(
    'CONNECTOR_URL',
    "Connector backend for `POST /api/connect` (`POST {CONNECTOR_URL}{path}`, SSE or NDJSON answers); otherwise the sandbox connector's sample records",
  ),
  token: optional('CONNECTOR_TOKEN', 'Bearer token sent to the connector'),
  idleTimeoutSeconds: integer(
    'CONNECTOR_IDLE_TIMEOUT_SECONDS',
    60,
    1,
    3600,
    'A connector silent this long (before answering, or mid-stream) fails the job (502; what was written stays)',
  ),
  heartbeatSeconds: integer(
    'CONNECTOR_HEARTBEAT_SECONDS',
    15,
    1,
    600,
    'How often a running lead job stamps its heartbeat (1 to 600); recovery settles a job after 4 missed heartbeats (at least 60 s)',
  ),
  leadPriceCents: usdAmount(
    'LEAD_PRICE_USD',
    '0.50',
    2,
    1000,
    "Price of one lead beyond the plan's allowance (`/get-leads`)",
  ),
};

export const connectorSection = section<{ connector: ConnectorConfig }>('Connector', v, (read, { url }) => {
  const connectorUrl = read(v.url);
  if (connectorUrl) url('CONNECTOR_URL', connectorUrl, ['http:', 'https:']);
  const heartbeatMs = read(v.heartbeatSeconds) * 1000;
  return {
    connector: {
      url: connectorUrl ? connectorUrl.replace(/\/$/, '') : null,
      token: read(v.token),
      idleTimeoutMs: read(v.idleTimeoutSeconds) * 1000,
      leadPriceCents: read(v.leadPriceCents),
      heartbeatMs,
      staleAfterMs: Math.max(60_000, 4 * heartbeatMs),
    },
  };
});
