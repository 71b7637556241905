// /console/campaigns: the account's campaigns with their progress, followed
// live: every campaign_status event (at most one a second per running
// campaign) redraws that campaign's row.
import { api, byId, el, formatDate, startPage } from './common.js';

const FINAL = ['completed', 'voicemail', 'no_answer', 'busy', 'failed', 'opted_out', 'do_not_call'];
let nextBefore = null;

const done = (counts) => FINAL.reduce((sum, status) => sum + (counts[status] ?? 0), 0);

function breakdown(counts) {
  const parts = Object.entries(counts)
    .filter(([status, n]) => status !== 'total' && n > 0)
    .map(([status, n]) => `${n} ${status.replace(/_/g, ' ')}`);
  return parts.join(' · ') || 'no contacts';
}

function cells(campaign) {
  const finished = done(campaign.counts);
  const share = campaign.counts.total ? Math.round((100 * finished) / campaign.counts.total) : 0;
  const status = campaign.reason ? `${campaign.status} (${campaign.reason.replace(/_/g, ' ')})` : campaign.status;
  return [
    el(
      'td',
      { 'data-label': 'Campaign' },
      el('strong', { text: campaign.name }),
      el('br'),
      el('small', { text: `created ${formatDate(campaign.createdAt)}` }),
    ),
    el(
      'td',
      { 'data-label': 'Status' },
      el('span', { class: `badge status-${campaign.status}`, 'data-testid': 'campaign-status', text: status }),
    ),
    el(
      'td',
      { 'data-label': 'Progress' },
      el('progress', {
        max: String(campaign.counts.total || 1),
        value: String(finished),
        'aria-label': `${share}% done`,
      }),
      el('span', {
        class: 'progress-text',
        'data-testid': 'campaign-progress',
        text: ` ${finished} of ${campaign.counts.total}`,
      }),
    ),
    el('td', { 'data-label': 'Contacts', 'data-testid': 'campaign-counts', text: breakdown(campaign.counts) }),
    el('td', { 'data-label': 'Calls', class: 'num', text: String(campaign.attempts) }),
    el('td', { 'data-label': 'Spent', class: 'num', text: `$${campaign.spentUsd.toFixed(2)}` }),
  ];
}

function row(campaign) {
  return el('tr', { 'data-testid': 'campaign-row', 'data-campaign-id': campaign.id }, ...cells(campaign));
}

async function loadPage() {
  const more = byId('more');
  more.disabled = true;
  try {
    const query = new URLSearchParams({ limit: '50', ...(nextBefore ? { before: nextBefore } : {}) });
    const { data } = await api(`/api/campaigns?${query}`);
    byId('campaign-list').append(...data.items.map(row));
    nextBefore = data.next ?? null;
    more.hidden = nextBefore === null;
    byId('campaigns-empty').hidden = byId('campaign-list').children.length > 0;
  } catch (error) {
    byId('campaigns-error').textContent = `The campaigns could not be listed: ${error.message}`;
  } finally {
    more.disabled = false;
  }
}

/** Redraws a campaign's row from its campaign_status event (the event carries status and counts; the rest is read). */
async function refresh(campaignId) {
  const current = document.querySelector(`[data-campaign-id="${CSS.escape(campaignId)}"]`);
  if (!current) return;
  const { data } = await api(`/api/campaigns/${encodeURIComponent(campaignId)}`);
  current.replaceChildren(...cells(data));
}

function follow() {
  // The session cookie signs the stream in (same origin).
  const events = new EventSource('/api/events/campaign_status');
  events.addEventListener('campaign_status', (event) => {
    const payload = JSON.parse(event.data);
    void refresh(payload.campaign_id).catch(() => {});
  });
}

startPage(async () => {
  byId('more').addEventListener('click', loadPage);
  await loadPage();
  follow();
  byId('content').dataset.ready = 'true';
});
