// The call page's analysis (DESIGN.md "Post-call analysis and analytics"):
// what the call was about, whether it succeeded and why, the fields it
// collected and the tasks it left, by the configured model or the sandbox
// analyser; and a button that analyses it again.
import { ApiError, api, byId, el } from './common.js';

/** An ended call's analysis comes seconds after its record: asked again a few times, not forever. */
let waitsForAnalysis = 10;

/** True while an ended call with a caller line has no analysis yet (and the page has not asked too often). */
export function awaitsAnalysis(call) {
  const due = call.endedAt && !call.analysis && call.transcript?.some((l) => l.role === 'caller');
  return Boolean(due) && waitsForAnalysis-- > 0;
}

const SENTIMENT = { positive: 'positive', neutral: 'neutral', negative: 'negative' };

function successText(analysis) {
  if (analysis.success === true) return 'Succeeded';
  if (analysis.success === false) return 'Did not succeed';
  return 'Not decided';
}

/** Shows `call.analysis` (none yet: a note while an ended call waits for it). */
export function showAnalysis(call, ended) {
  const section = byId('analysis-section');
  const analysis = call.analysis;
  section.hidden = !ended;
  const body = byId('analysis');
  if (!analysis) {
    body.dataset.status = 'none';
    body.replaceChildren(
      el('p', {
        class: 'empty',
        text: call.transcript?.some((l) => l.role === 'caller')
          ? 'Being analysed: it appears here a few seconds after the call ends.'
          : 'No analysis: the caller said nothing.',
      }),
    );
    return;
  }
  body.dataset.status = analysis.status;
  body.dataset.success = String(analysis.success);
  const facts = [
    ['Outcome', analysis.status === 'failed' ? `Analysis failed: ${analysis.reason ?? ''}` : successText(analysis)],
    ...(analysis.successReason ? [['Why', analysis.successReason]] : []),
    ...(analysis.sentiment ? [['Caller mood', SENTIMENT[analysis.sentiment] ?? analysis.sentiment]] : []),
    ['By', analysis.by === 'sandbox' ? 'the sandbox analyser (offline)' : 'the configured model'],
  ];
  const data = Object.entries(analysis.data ?? {});
  body.replaceChildren(
    analysis.summary ? el('p', { class: 'summary', 'data-testid': 'analysis-summary', text: analysis.summary }) : null,
    el(
      'dl',
      { class: 'facts' },
      ...facts.flatMap(([name, value]) => [el('dt', { text: name }), el('dd', { text: value })]),
    ),
    el('h3', { text: 'Collected fields' }),
    data.length
      ? el(
          'dl',
          { class: 'facts', 'data-testid': 'analysis-data' },
          ...data.flatMap(([name, value]) => [el('dt', { text: name }), el('dd', { text: String(value) })]),
        )
      : el('p', { class: 'empty', 'data-testid': 'analysis-data', text: 'None.' }),
    el('h3', { text: 'Tasks' }),
    analysis.tasks?.length
      ? el(
          'ul',
          { class: 'tasks', 'data-testid': 'analysis-tasks' },
          ...analysis.tasks.map((task) =>
            el('li', {}, task.title, task.dueDate ? el('span', { class: 'flag', text: `due ${task.dueDate}` }) : null),
          ),
        )
      : el('p', { class: 'empty', 'data-testid': 'analysis-tasks', text: 'Nothing left to do.' }),
  );
}

/** The "Analyse again" button: queues the analysis; the page shows the new one when it is written. */
export function wireAnalysisRerun(callId, reload) {
  const button = byId('analysis-rerun');
  button.addEventListener('click', async () => {
    button.disabled = true;
    byId('analysis-error').textContent = '';
    try {
      await api(`/api/calls/${encodeURIComponent(callId)}/analysis`, { method: 'POST' });
      byId('analysis').dataset.status = 'queued';
      setTimeout(reload, 2000);
    } catch (error) {
      byId('analysis-error').textContent = error instanceof ApiError ? error.message : `Not queued: ${error.message}`;
    } finally {
      button.disabled = false;
    }
  });
}
