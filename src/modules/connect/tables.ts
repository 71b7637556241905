export interface ConnectJobsTable {
  id: string;
  user_id: string;
  repository: string;
  path: string;
  /** running → settling (final count fixed, charge under way) → settled. */
  state: 'running' | 'settling' | 'settled';
  granted: number;
  free_credits: number;
  price_cents: number;
  reserved_cents: number;
  delivered: number;
  created_at: number;
  updated_at: number;
}

export interface ConnectTables {
  connect_jobs: ConnectJobsTable;
}
