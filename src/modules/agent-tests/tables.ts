/** A test (DESIGN.md "Agent tests"): its definition is JSON sealed with the master key. */
export interface AgentTestsTable {
  id: string;
  user_id: string;
  name: string;
  definition: string;
  created_at: number;
  updated_at: number;
}

export type AgentTestRunStatus = 'queued' | 'running' | 'passed' | 'failed' | 'error';

/** A run of one test or a suite; its status follows its results. */
export interface AgentTestRunsTable {
  id: string;
  user_id: string;
  status: AgentTestRunStatus;
  total: number;
  created_at: number;
  finished_at: number | null;
}

/** One test of a run: `result` is the sealed JSON of its checks, transcript, tool calls, path, variables, analysis. */
export interface AgentTestResultsTable {
  run_id: string;
  position: number;
  test_id: string;
  user_id: string;
  test_name: string;
  status: AgentTestRunStatus;
  result: string | null;
  duration_ms: number | null;
  created_at: number;
  finished_at: number | null;
}

export interface AgentTestTables {
  agent_tests: AgentTestsTable;
  agent_test_runs: AgentTestRunsTable;
  agent_test_results: AgentTestResultsTable;
}
