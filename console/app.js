import { api, problemText, session, whenUnauthorized } from './api.js';
import { field, h, option, setError } from './dom.js';
import { decisionsView } from './decisions.js';
import { editorView } from './editor.js';
import { revisionsView } from './revisions.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');

/** Replaces the page's content; the new heading takes focus so a screen reader announces the page. */
function show(title, ...content) {
  document.title = `${title} · Scenario Compliance Console`;
  const heading = h('h1', { tabindex: '-1' }, title);
  main.replaceChildren(heading, ...content);
  heading.focus();
}

/** Bumped by each route and the sign-in view: a view started before shows nothing when its calls answer late. */
let generation = 0;
const showForNewView = () => {
  const mine = ++generation;
  return (...page) => { if (mine === generation) show(...page); };
};

function signInView(message = '') {
  const showNow = showForNewView();
  nav.hidden = true;
  const input = h('input', { type: 'password', name: 'token', autocomplete: 'off', required: true, spellcheck: 'false' });
  const status = h('p', { class: 'status', role: 'status' });
  const form = h('form', {
    novalidate: true,
    onsubmit: async (e) => {
      e.preventDefault();
      const token = input.value.trim();
      if (token === '') return setError(input, 'Paste a token first');
      status.textContent = 'Checking the token…';
      const r = await api('GET', '/compliance/scenarios?limit=1', { token });
      if (r.status === 401) { status.textContent = ''; return setError(input, 'The service does not accept this token'); }
      // 403: the token is good but may not list scenarios; any other failure says nothing of the token, so it is not kept.
      if (!r.ok && r.status !== 403) { status.textContent = ''; return setError(input, `The token could not be checked: ${problemText(r)}`); }
      session.set(token);
      input.value = '';
      location.hash = '#/scenarios';
      route();
    },
  },
  field('API token', input, { hint: 'A token from API_TOKENS or a project JWT. Kept in this tab only (sessionStorage) and sent only to this service.' }),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Sign in')),
  status);
  showNow('Sign in', message ? h('p', { class: 'alert', role: 'alert' }, message) : '', form);
}

const MAX_PAGES = 50;

async function loadAll(path) {
  const items = [];
  let cursor = null;
  for (let i = 0; i < MAX_PAGES; i++) {
    const r = await api('GET', `${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    if (!r.ok) return { error: r };
    items.push(...r.data.items);
    cursor = r.data.nextCursor;
    if (!cursor) break;
  }
  return { items, truncated: Boolean(cursor) };
}

async function scenariosView(show) {
  const search = h('input', { type: 'search', name: 'search' });
  const type = h('select', { name: 'type' }, option('', 'All types'), ['ChallengeQuery', 'OnChainZKP', 'OffChainZKP'].map((t) => option(t)));
  const count = h('p', { class: 'status', role: 'status' }, 'Loading…');
  const body = h('tbody');
  const table = h('table', {}, h('caption', { class: 'hint' }, 'Scenarios of your projects'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Id'), h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'Project'),
      h('th', { scope: 'col' }, 'Rules'), h('th', { scope: 'col' }, 'Updated'))), body);
  show('Scenarios',
    h('div', { class: 'filters', role: 'search' }, field('Search by id or name', search), field('Type', type)),
    count, h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Scenarios table' }, table));
  const { items, error, truncated } = await loadAll('/compliance/scenarios');
  if (error) { count.textContent = problemText(error); return; }
  const render = () => {
    const q = search.value.trim().toLowerCase();
    const shown = items.filter((s) => (type.value === '' || s.input.type === type.value) &&
      (q === '' || s.id.toLowerCase().includes(q) || String(s.input.name ?? '').toLowerCase().includes(q)));
    body.replaceChildren(...shown.map((s) => h('tr', {},
      // The project in the link, empty for none: a token of several projects (or an operator's) may hold this id in more than one.
      h('td', {}, h('a', { href: `#/scenarios/${encodeURIComponent(s.id)}?projectId=${encodeURIComponent(s.input.projectId ?? '')}` }, s.id)),
      h('td', {}, s.input.name ?? ''), h('td', {}, s.input.type), h('td', {}, s.input.projectId ?? '—'), h('td', {}, String(s.input.queryConfigurations?.length ?? 0)),
      h('td', {}, new Date(s.updatedAt).toLocaleString()))));
    count.textContent = `${shown.length} of ${items.length} scenarios` +
      (truncated ? ` (only the first ${items.length} are loaded: the list stops after ${MAX_PAGES} pages; narrow it through the API)` : '');
  };
  search.addEventListener('input', render);
  type.addEventListener('change', render);
  render();
}

/** A scenario's pages, each a module: '' the editor, 'revisions' and 'decisions' with the rest of the path and the query. */
const SCENARIO_PAGES = { '': editorView, revisions: revisionsView, decisions: decisionsView };

async function route() {
  if (!session.get()) return signInView();
  const show = showForNewView();
  nav.hidden = false;
  const [hash, query = ''] = location.hash.replace(/^#/, '').split('?');
  const m = /^\/scenarios\/([^/]+)(?:\/(revisions|decisions)(?:\/(.*))?)?$/.exec(hash);
  if (m) {
    let id;
    try { id = decodeURIComponent(m[1]); } catch { id = m[1]; }
    const page = m[2] ?? '';
    const params = new URLSearchParams(query);
    return SCENARIO_PAGES[page](withTabs(show, id, page, params.get('projectId')), id, { rest: m[3] ?? '', params });
  }
  if (hash === '/new') return editorView(show, null);
  return scenariosView(show);
}

/** `show` for a scenario's page: the tabs between its editor, revisions and decisions come first, the current one marked. */
function withTabs(show, id, current, projectId) {
  const base = `#/scenarios/${encodeURIComponent(id)}`;
  const project = projectId === null ? '' : `?projectId=${encodeURIComponent(projectId)}`;
  const tab = (page, label) => h('li', {}, h('a', { href: `${page ? `${base}/${page}` : base}${project}`, 'aria-current': page === current ? 'page' : undefined }, label));
  return (title, ...content) => show(title,
    h('nav', { class: 'tabs', 'aria-label': 'Scenario' }, h('ul', {}, tab('', 'Rules'), tab('revisions', 'Revisions'), tab('decisions', 'Decisions'))),
    ...content);
}

whenUnauthorized(() => { session.clear(); signInView('Your token was refused (expired or revoked): sign in again.'); });
document.getElementById('sign-out').addEventListener('click', () => { session.clear(); location.hash = ''; signInView(); });
window.addEventListener('hashchange', route);
route();
