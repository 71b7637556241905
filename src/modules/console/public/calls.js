// /console/calls: the account's calls, newest first, a page at a time.
import { api, byId, el, formatCost, formatDate, formatDuration, startPage } from './common.js';

let nextBefore = null;

function row(call) {
  const link = el('a', { href: `/console/calls/${encodeURIComponent(call.id)}`, text: formatDate(call.startedAt) });
  const status = call.outcome && call.outcome !== call.status ? `${call.status} (${call.outcome})` : call.status;
  return el(
    'tr',
    { 'data-testid': 'call-row', 'data-call-id': call.id },
    el('td', { 'data-label': 'Started' }, link),
    el('td', { 'data-label': 'Direction' }, el('span', { class: 'badge', text: call.direction })),
    el('td', { 'data-label': 'Status', text: status }),
    el('td', { 'data-label': 'From', text: call.from ?? '—' }),
    el('td', { 'data-label': 'To', text: call.to ?? '—' }),
    el('td', { 'data-label': 'Duration', class: 'num', text: formatDuration(call.durationSeconds) }),
    el('td', { 'data-label': 'Cost', class: 'num', text: formatCost(call) }),
  );
}

async function loadPage() {
  const more = byId('more');
  more.disabled = true;
  try {
    const query = new URLSearchParams({ limit: '50', ...(nextBefore ? { before: nextBefore } : {}) });
    const { data } = await api(`/api/calls?${query}`);
    byId('call-list').append(...data.calls.map(row));
    nextBefore = data.nextBefore;
    more.hidden = nextBefore === null;
    byId('calls-empty').hidden = byId('call-list').children.length > 0;
  } catch (error) {
    byId('calls-error').textContent = `The calls could not be listed: ${error.message}`;
  } finally {
    more.disabled = false;
  }
}

startPage(async () => {
  byId('more').addEventListener('click', loadPage);
  await loadPage();
  byId('content').dataset.ready = 'true';
});
