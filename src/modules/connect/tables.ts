export interface ConnectJobsTable {
  id: string;
  user_id: string;
  repository: string;
  path: string;
  state: 'running' | 'settled';
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
