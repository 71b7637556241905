// Scheduling integrations (spec 4.17, 2.16).

export interface IntegrationsTable {
  id: string;
  user_id: string;
  type: string;
  /** JSON of the sanitized payload (eventTypeUri, eventTypeSlug, eventTypeName, userUri, schedulingUrl?). */
  data: string;
  /** The access token sealed with the master key. */
  sealed_token: string;
  created_at: number;
}

export interface IntegrationTables {
  integrations: IntegrationsTable;
}
