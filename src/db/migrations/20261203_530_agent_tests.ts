// Agent tests (DESIGN.md "Agent tests"): the tests themselves (their
// definition sealed with the master key: an inline agent may carry custom
// tool headers), runs of one test or a suite, and one result row per test of
// a run. And the server's one durable job queue (src/modules/platform/jobs.ts):
// a row per job, claimed by one instance at a time under a lease.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('run_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Claims look for due rows of one kind: pending ones by run_at, running ones whose lease (run_at) ended.
  await db.schema.createIndex('jobs_due').on('jobs').columns(['kind', 'status', 'run_at']).execute();

  await db.schema
    .createTable('agent_tests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('definition', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('agent_tests_user').on('agent_tests').columns(['user_id', 'created_at']).execute();

  await db.schema
    .createTable('agent_test_runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema
    .createIndex('agent_test_runs_user')
    .on('agent_test_runs')
    .columns(['user_id', 'status', 'created_at'])
    .execute();

  await db.schema
    .createTable('agent_test_results')
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('test_id', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('test_name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('result', 'text')
    .addColumn('duration_ms', 'integer')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .addPrimaryKeyConstraint('agent_test_results_pk', ['run_id', 'position'])
    .execute();
  // The console's last result per test.
  await db.schema
    .createIndex('agent_test_results_test')
    .on('agent_test_results')
    .columns(['test_id', 'created_at'])
    .execute();
}
