// Outbound webhooks: each user's signing secret and the durable delivery queue.

export interface WebhookSecretsTable {
  user_id: string;
  /** `whsec_…` sealed with the master key (SecretBox). */
  secret: string;
  previous_secret: string | null;
  rotated_at: number | null;
  created_at: number;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookDeliveriesTable {
  /** Also the `webhook-id` header. */
  id: string;
  user_id: string;
  url: string;
  event_type: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

export interface WebhookTables {
  webhook_secrets: WebhookSecretsTable;
  webhook_deliveries: WebhookDeliveriesTable;
}
