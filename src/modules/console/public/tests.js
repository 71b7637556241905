// /console/tests: the account's agent tests with their last result (a failed
// check shows what was expected against what happened), and a button that
// runs them all and follows the run until it ends.
import { api, byId, el, formatDate, startPage } from './common.js';

const show = (value) => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

function checkItem(check) {
  return el(
    'li',
    { 'data-testid': 'failed-check' },
    el('strong', { text: check.name }),
    el(
      'div',
      { class: 'expected' },
      el('span', { class: 'label', text: 'expected ' }),
      el('code', { text: show(check.expected) }),
    ),
    el(
      'div',
      { class: 'actual' },
      el('span', { class: 'label', text: 'actual ' }),
      el('code', { text: show(check.actual) }),
    ),
  );
}

function lastResultCell(last) {
  if (!last)
    return el(
      'td',
      { 'data-label': 'Last result' },
      el('span', { class: 'badge', 'data-testid': 'test-status', text: 'not run' }),
    );
  const badge = el('span', { class: `badge status-${last.status}`, 'data-testid': 'test-status', text: last.status });
  const failed = last.failedChecks ?? [];
  return el(
    'td',
    { 'data-label': 'Last result' },
    badge,
    failed.length ? el('ul', { class: 'checks' }, ...failed.map(checkItem)) : null,
  );
}

function callerOf(test) {
  if (test.caller.goal) return `goal: ${test.caller.goal}`;
  const lines = test.caller.lines ?? [];
  return `${lines.length} line${lines.length === 1 ? '' : 's'}: "${lines[0] ?? ''}"${lines.length > 1 ? ' …' : ''}`;
}

function row(test) {
  const agent = test.agentId ? `agents/${test.agentId}` : (test.agent?.name ?? '—');
  return el(
    'tr',
    { 'data-testid': 'test-row', 'data-test-id': test.id, 'data-status': test.lastResult?.status ?? 'not-run' },
    el('td', { 'data-label': 'Test' }, el('strong', { text: test.name })),
    el('td', { 'data-label': 'Agent', text: agent }),
    el('td', { 'data-label': 'Caller', text: callerOf(test) }),
    lastResultCell(test.lastResult),
    el('td', { 'data-label': 'Last run', text: formatDate(test.lastResult?.finishedAt) }),
  );
}

async function load() {
  const list = byId('test-list');
  try {
    const { data } = await api('/api/agent-tests');
    list.replaceChildren(...data.map(row));
    byId('tests-empty').hidden = data.length > 0;
    byId('run-tests').disabled = data.length === 0;
    byId('tests-error').textContent = '';
  } catch (error) {
    byId('tests-error').textContent = `The tests could not be listed: ${error.message}`;
  }
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function runAll() {
  const button = byId('run-tests');
  const state = byId('run-state');
  button.disabled = true;
  try {
    const { data } = await api('/api/agent-tests/runs', { method: 'POST', body: {} });
    state.textContent = 'Queued…';
    for (let wait = 150; ; wait = Math.min(wait * 1.5, 1500)) {
      const { data: run } = await api(`/api/agent-tests/runs/${encodeURIComponent(data.runId)}`);
      const { total, passed, failed, error } = run.summary;
      if (run.status !== 'queued' && run.status !== 'running') {
        state.textContent = `Run ${run.status}: ${passed} of ${total} passed, ${failed} failed, ${error} could not run.`;
        break;
      }
      state.textContent = `Running: ${passed + failed + error} of ${total} done…`;
      await sleep(wait);
    }
    await load();
  } catch (error) {
    state.textContent = '';
    byId('tests-error').textContent = `The tests could not be run: ${error.message}`;
  } finally {
    button.disabled = false;
  }
}

startPage(async () => {
  byId('run-tests').addEventListener('click', runAll);
  await load();
  byId('content').dataset.ready = 'true';
});
