// /console/analytics: the account's calls per day by outcome, the success
// rate, the cost and the answer latency percentiles, drawn with uPlot (served
// from its installed package, no CDN), filtered by agent, campaign and
// dates. Days are the browser's time zone's.
import uPlot from './uplot.js';
import { api, byId, el, startPage } from './common.js';

const DAY_MS = 86_400_000;
const tz = Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
/** Outcome series, stacked bottom to top, with their colours (other: the calls not in any, e.g. under way or no answer). */
const OUTCOMES = [
  ['completed', '#2e7d32'],
  ['transferred', '#0b5fff'],
  ['voicemail', '#f9a825'],
  ['failed', '#c62828'],
  ['other', '#8c959f'],
];
const charts = new Map();

const isoDay = (date) => date.toISOString().slice(0, 10);
/** A day key (YYYY-MM-DD) as the x value uPlot wants: seconds at that day's UTC noon (labels then fall on the day). */
const xOf = (key) => Date.parse(`${key}T12:00:00Z`) / 1000;

function query(groupBy) {
  const params = new URLSearchParams({ from: byId('from').value, to: byId('to').value, tz, groupBy });
  if (byId('agent').value) params.set('agentId', byId('agent').value);
  if (byId('campaign').value) params.set('campaignId', byId('campaign').value);
  return `/api/analytics/calls?${params}`;
}

/** The chart fills its figure's content box (the figure's width is the grid's; the chart's own canvas must not widen it). */
function size(container) {
  const figure = container.parentElement;
  const style = getComputedStyle(figure);
  const inner = figure.clientWidth - Number.parseFloat(style.paddingLeft) - Number.parseFloat(style.paddingRight);
  return { width: Math.max(240, Math.floor(inner)), height: 220 };
}

/** Draws (or redraws) one chart into its box; the box keeps the plotted numbers for people and tests. */
function draw(id, options, data) {
  const container = byId(id);
  charts.get(id)?.destroy();
  container.replaceChildren();
  const common = {
    ...size(container),
    scales: { x: { time: true }, ...options.scales },
    axes: [
      { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' } },
      { stroke: 'currentColor', grid: { stroke: 'rgba(128,128,128,0.2)' }, ...options.y },
    ],
    legend: { show: true },
    series: [
      { label: 'Day', value: (_u, v) => (v == null ? '' : new Date(v * 1000).toISOString().slice(0, 10)) },
      ...options.series,
    ],
    cursor: { points: { show: false } },
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'UTC'),
  };
  const chart = new uPlot(common, data, container);
  charts.set(id, chart);
  container.dataset.points = String(data[0].length);
  container.dataset.series = options.series.map((s) => s.label).join(',');
  container.dataset.values = JSON.stringify(data.slice(1));
}

function bars() {
  return uPlot.paths.bars({ size: [0.7, 60] });
}
const noPoints = { show: false };

function drawAll(buckets) {
  const x = buckets.map((b) => xOf(b.key));
  // Stacked: each series is the sum of itself and those below it; drawn top first so the lower ones cover it.
  const parts = buckets.map((b) => ({
    completed: b.completed,
    transferred: b.transferred,
    voicemail: b.voicemail,
    failed: b.failed,
    other: Math.max(0, b.calls - b.completed - b.transferred - b.voicemail - b.failed),
  }));
  const stacked = [];
  let running = buckets.map(() => 0);
  for (const [name] of OUTCOMES) {
    running = running.map((sum, i) => sum + parts[i][name]);
    stacked.push(running);
  }
  const order = [...OUTCOMES.keys()].reverse();
  draw(
    'chart-outcomes',
    {
      scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
      series: order.map((i) => ({
        label: OUTCOMES[i][0],
        fill: OUTCOMES[i][1],
        stroke: OUTCOMES[i][1],
        paths: bars(),
        points: noPoints,
        value: (_u, _v, _s, idx) => (idx == null ? '' : String(parts[idx][OUTCOMES[i][0]])),
      })),
    },
    [x, ...order.map((i) => stacked[i])],
  );
  draw(
    'chart-success',
    {
      scales: { y: { range: [0, 100] } },
      y: { values: (_u, ticks) => ticks.map((t) => `${t}%`) },
      series: [
        {
          label: 'success rate',
          stroke: '#2e7d32',
          width: 2,
          points: { show: true, size: 6 },
          spanGaps: true,
          value: (_u, v) => (v == null ? '—' : `${v}%`),
        },
      ],
    },
    [x, buckets.map((b) => (b.successRate === null ? null : Math.round(b.successRate * 1000) / 10))],
  );
  draw(
    'chart-cost',
    {
      scales: { y: { range: (_u, _min, max) => [0, Math.max(0.01, max)] } },
      y: { values: (_u, ticks) => ticks.map((t) => `$${t.toFixed(2)}`) },
      series: [
        {
          label: 'cost',
          fill: '#6f42c1',
          stroke: '#6f42c1',
          paths: bars(),
          points: noPoints,
          value: (_u, v) => (v == null ? '' : `$${v.toFixed(2)}`),
        },
      ],
    },
    [x, buckets.map((b) => b.costUsd)],
  );
  draw(
    'chart-latency',
    {
      scales: { y: { range: (_u, _min, max) => [0, Math.max(100, max)] } },
      series: [
        { label: 'p50', stroke: '#0b5fff', width: 2, points: { show: true, size: 5 }, spanGaps: true },
        { label: 'p95', stroke: '#c62828', width: 2, dash: [6, 4], points: { show: true, size: 5 }, spanGaps: true },
      ],
    },
    [x, buckets.map((b) => b.latencyP50Ms), buckets.map((b) => b.latencyP95Ms)],
  );
}

function showTotals(t) {
  const tiles = [
    ['Calls', String(t.calls)],
    ['Answered', String(t.answered)],
    ['Completed', String(t.completed)],
    ['Success rate', t.successRate === null ? '—' : `${Math.round(t.successRate * 1000) / 10}%`],
    ['Avg duration', t.avgDurationSeconds === null ? '—' : `${Math.round(t.avgDurationSeconds)} s`],
    ['Cost', `$${t.costUsd.toFixed(2)}`],
    ['Latency p50', t.latencyP50Ms === null ? '—' : `${t.latencyP50Ms} ms`],
    ['Latency p95', t.latencyP95Ms === null ? '—' : `${t.latencyP95Ms} ms`],
  ];
  byId('totals').replaceChildren(
    ...tiles.map(([name, value]) => el('div', { class: 'tile' }, el('dt', { text: name }), el('dd', { text: value }))),
  );
}

/** The agents and campaigns of the range, for the filters (their keys as the analytics route names them). */
async function fillChoices() {
  for (const [id, groupBy, none] of [
    ['agent', 'agent', null],
    ['campaign', 'campaign', null],
  ]) {
    const select = byId(id);
    const chosen = select.value;
    const params = new URLSearchParams({ from: byId('from').value, to: byId('to').value, tz, groupBy });
    const { data } = await api(`/api/analytics/calls?${params}`);
    const keys = data.buckets.map((b) => b.key).filter((k) => k !== none);
    select.replaceChildren(
      select.options[0],
      ...keys.map((key) => el('option', { value: key, text: key, selected: key === chosen })),
    );
  }
}

async function show() {
  byId('analytics-error').textContent = '';
  byId('content').dataset.ready = 'pending';
  try {
    await fillChoices();
    const { data } = await api(query('day'));
    showTotals(data.totals);
    drawAll(data.buckets);
  } catch (error) {
    byId('analytics-error').textContent = `The analytics could not be read: ${error.message}`;
  }
  byId('content').dataset.ready = 'true';
}

startPage(async () => {
  byId('tz').textContent = tz;
  const today = new Date();
  byId('to').value = isoDay(today);
  byId('from').value = isoDay(new Date(today.getTime() - 29 * DAY_MS));
  const params = new URLSearchParams(location.search);
  for (const name of ['from', 'to']) if (params.get(name)) byId(name).value = params.get(name);
  byId('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    void show();
  });
  // A figure that changes width (the window, the grid's columns) resizes its chart.
  let resized = null;
  new ResizeObserver(() => {
    clearTimeout(resized);
    resized = setTimeout(() => {
      for (const [id, chart] of charts) chart.setSize(size(byId(id)));
    }, 100);
  }).observe(document.querySelector('.charts'));
  await show();
});
