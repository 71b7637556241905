// /console/calls/{id}: one call, its transcript with tool calls, the path it
// took on its pathway (call-path.js), latency per turn and the recording. While the call is under way (or its record is being
// written) the page asks again every two seconds.
import { awaitsAnalysis, showAnalysis, wireAnalysisRerun } from './call-analysis.js';
import { showCallPath } from './call-path.js';
import { ApiError, api, byId, el, formatCost, formatDate, formatDuration, formatMs, startPage } from './common.js';

const ENDED = new Set(['completed', 'failed', 'busy', 'no_answer', 'canceled']);
const callId = decodeURIComponent(location.pathname.split('/').pop());
/** An ended call's record is written just after its end: asked again a few times, not forever. */
let waitsForRecord = 15;

/** "0:05" from ms since the call was answered. */
const at = (ms) => (typeof ms === 'number' ? formatDuration(ms / 1000) : '');

function showFacts(call) {
  const facts = [
    [
      'Status',
      call.outcome && call.outcome !== call.status
        ? `${call.status} (${call.outcome}${call.reason ? `: ${call.reason}` : ''})`
        : call.status,
    ],
    ['Direction', call.direction],
    ['From', call.from ?? '—'],
    ['To', call.to ?? '—'],
    ['Started', formatDate(call.startedAt)],
    ['Answered', formatDate(call.answeredAt)],
    ['Ended', formatDate(call.endedAt)],
    ['Duration', formatDuration(call.durationSeconds)],
    ['Cost', formatCost(call)],
  ];
  byId('facts').replaceChildren(
    ...facts.flatMap(([name, value]) => [el('dt', { text: name }), el('dd', { text: value })]),
  );
  byId('call-title').textContent =
    `${call.direction === 'web' ? 'Web call' : call.direction === 'inbound' ? 'Inbound call' : 'Call'} · ${formatDate(call.startedAt)}`;
}

function showTranscript(lines) {
  byId('transcript').replaceChildren(
    ...lines.map((line) => {
      const role = line.role === 'agent' ? 'agent' : 'caller';
      const flags = [];
      if (line.interrupted) flags.push('interrupted: what the caller heard');
      if (line.recognised === false) flags.push('not recognised from audio');
      if (line.keypad) flags.push('a key pressed');
      return el(
        'li',
        { 'data-role': role },
        el(
          'span',
          { class: 'who-said' },
          role === 'agent' ? 'Agent' : 'Caller',
          line.startMs !== undefined ? ` · ${at(line.startMs)}` : '',
          typeof line.node === 'string'
            ? el('span', { class: 'node-tag', 'data-node': line.node, text: line.node })
            : null,
        ),
        el('span', { class: 'text', text: line.text }),
        ...flags.map((flag) => el('span', { class: 'flag', text: `(${flag})` })),
      );
    }),
  );
  byId('transcript-empty').hidden = lines.length > 0;
}

function showLatency(lines) {
  const turns = lines.filter((line) => line.role === 'agent' && line.latency);
  byId('latency-rows').replaceChildren(
    ...turns.map((line, index) =>
      el(
        'tr',
        {},
        el('td', { 'data-label': 'Turn', text: String(index + 1) }),
        el('td', {
          'data-label': 'Agent said',
          text: line.text.length > 80 ? `${line.text.slice(0, 80)}…` : line.text,
        }),
        el('td', { 'data-label': 'Speech to text', class: 'num', text: formatMs(line.latency.sttMs) }),
        el('td', { 'data-label': 'Model', class: 'num', text: formatMs(line.latency.llmFirstTokenMs) }),
        el('td', { 'data-label': 'Speech', class: 'num', text: formatMs(line.latency.ttsFirstByteMs) }),
        el('td', { 'data-label': 'Overhead', class: 'num', text: formatMs(line.latency.overheadMs) }),
        el('td', { 'data-label': 'Total', class: 'num', text: formatMs(line.latency.totalMs) }),
      ),
    ),
  );
  if (!turns.length)
    byId('latency-rows').append(el('tr', {}, el('td', { colspan: '7', class: 'empty', text: 'No answered turns.' })));
}

function showTools(toolCalls) {
  byId('tools').replaceChildren(
    ...toolCalls.map((call) =>
      el(
        'li',
        {},
        el('strong', { text: call.name }),
        typeof call.atMs === 'number' ? el('span', { class: 'flag', text: `at ${at(call.atMs)}` }) : null,
        el('pre', { 'aria-label': `${call.name} arguments`, text: JSON.stringify(call.arguments, null, 2) }),
        el('pre', { 'aria-label': `${call.name} result`, text: JSON.stringify(call.result, null, 2) }),
      ),
    ),
  );
  if (!toolCalls.length) byId('tools').append(el('li', { class: 'empty', text: 'No tool calls.' }));
}

function showRecording(url) {
  const audio = byId('recording');
  byId('recording-section').hidden = !url;
  // Same origin: the browser sends the session cookie with the request.
  if (url && audio.getAttribute('src') !== url) audio.src = url;
}

async function load() {
  let call;
  try {
    call = (await api(`/api/calls/${encodeURIComponent(callId)}`)).data;
  } catch (error) {
    byId('call-error').textContent =
      error instanceof ApiError && error.status === 404
        ? 'No such call in this account.'
        : `The call could not be read: ${error.message}`;
    return;
  }
  showFacts(call);
  showTranscript(call.transcript ?? []);
  showLatency(call.transcript ?? []);
  showTools(call.toolCalls ?? []);
  showRecording(call.recordingUrl);
  const ended = ENDED.has(call.status);
  showAnalysis(call, ended);
  await showCallPath(call, !ended);
  const settled = ended && (call.transcript !== undefined || call.status !== 'completed' || waitsForRecord-- <= 0);
  byId('content').dataset.ready = settled ? 'true' : 'pending';
  if (!settled || awaitsAnalysis(call)) setTimeout(load, 2000);
}

startPage(async () => {
  wireAnalysisRerun(callId, load);
  await load();
});
