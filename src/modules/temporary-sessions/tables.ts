export interface TemporarySessionsTable {
  session_id: string;
  user_id: string;
  type: string;
  phone: string;
  email: string;
  /** The temporary number the call was placed from. */
  number: string;
  created_at: number;
  summary_sent_at: number | null;
}

export interface TemporaryNumberLeasesTable {
  number: string;
  user_id: string;
  session_id: string | null;
  leased_at: number;
  expires_at: number;
}

export interface TemporarySessionTables {
  temporary_sessions: TemporarySessionsTable;
  temporary_number_leases: TemporaryNumberLeasesTable;
}
