import { api, problemText } from './api.js';
import { h } from './dom.js';

/** A scenario's executions, newest first. */
export async function decisionsView(show, scenarioId) {
  const r = await api('GET', `/compliance/scenarios/${encodeURIComponent(scenarioId)}/executions?limit=100`);
  if (!r.ok) return show(`Decisions of ${scenarioId}`, h('p', { class: 'alert', role: 'alert' }, problemText(r)));
  show(`Decisions of ${scenarioId}`, h('ul', {}, r.data.items.map((x) => h('li', {}, `${x.executionId ?? x.id}`))));
}
