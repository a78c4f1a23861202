import { api, problemText, session } from './api.js';
import { field, h, option, setError, uid } from './dom.js';

const VERDICTS = ['passed', 'failed', 'error', 'pending'];
const COLORS = { passed: '#106b2e', failed: '#a4141a', error: '#8a4b00', pending: '#4a4a55' };
const HOUR = 3_600_000;
const DEFAULT_DAYS = 7;
/** Counts are whole: the y axes step by these. */
const WHOLE = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7];
/** Up to this period the chart counts per hour, beyond per day. */
const HOURLY_UP_TO = 3 * 24 * HOUR;

const enc = encodeURIComponent;
const base = (id) => `#/scenarios/${enc(id)}/decisions`;
const when = (iso) => new Date(iso).toLocaleString();

/** A datetime-local input's text (local time, minutes) for an instant, and back. */
const localText = (iso) => {
  const d = new Date(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
};
const fromLocal = (text) => {
  const t = new Date(text).getTime();
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
};

/**
 * The page's filters from its hash query; without a period, the last DEFAULT_DAYS days up to the next full hour, or
 * the next UTC midnight where the charts count by day (the buckets then whole UTC days, as the table's times).
 */
function filtersOf(params) {
  const step = DEFAULT_DAYS * 24 * HOUR <= HOURLY_UP_TO ? HOUR : 24 * HOUR;
  const to = params.get('to') ?? new Date(Math.ceil(Date.now() / step) * step).toISOString();
  const from = params.get('from') ?? new Date(Date.parse(to) - DEFAULT_DAYS * 24 * HOUR).toISOString();
  return { verdict: params.get('verdict') ?? '', address: params.get('address') ?? '', from, to };
}

/** The scenario's project, when the page's address names one (a token of several projects may hold the id in more than one). */
const projectOf = (params) => (params.has('projectId') ? { projectId: params.get('projectId') } : {});

/** The API's query for the filters: the empty ones left out. */
function queryOf(filters, extra = {}) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...filters, ...extra })) if (v !== '' && v !== undefined) q.set(k, v);
  return q;
}

/** The page's project on an API query, an empty one (no project) included. */
function withProject(q, project) {
  if (project.projectId !== undefined) q.set('projectId', project.projectId);
  return q;
}

const alertOf = (r) => h('div', { class: 'alert', role: 'alert' }, h('p', {}, problemText(r)),
  r.data?.errors?.length ? h('ul', {}, r.data.errors.map((e) => h('li', {}, `${e.field ?? e.pointer}: ${e.message}`))) : '');

/** A scenario's decisions: `rest` names one execution, `params` hold the filters (verdict, address, from, to). */
export async function decisionsView(show, scenarioId, { rest = '', params = new URLSearchParams() } = {}) {
  if (rest !== '') {
    let executionId = rest;
    try { executionId = decodeURIComponent(rest); } catch { /* shown as it is */ }
    return oneExecution(show, scenarioId, executionId, params);
  }
  const filters = filtersOf(params);
  const form = filterForm(scenarioId, filters, projectOf(params));
  const status = h('p', { class: 'status', role: 'status' }, 'Loading…');
  const listBox = h('div');
  const chartBox = h('div');
  const project = projectOf(params);
  const exportBox = exportPanel(scenarioId, filters, project);
  show(`Decisions of ${scenarioId}`, form, status,
    h('section', { 'aria-labelledby': 'decisions-list' }, h('h2', { id: 'decisions-list' }, 'Executions'), listBox),
    h('section', { 'aria-labelledby': 'decisions-charts' }, h('h2', { id: 'decisions-charts' }, 'Verdicts and failing rules'), chartBox),
    exportBox);
  const [listed] = await Promise.all([executionList(scenarioId, filters, project, params, listBox), charts(scenarioId, filters, project, chartBox)]);
  status.textContent = listed;
}

function filterForm(scenarioId, filters, project) {
  const verdict = h('select', { name: 'verdict' }, option('', 'Any verdict'), VERDICTS.map((v) => option(v, v, v === filters.verdict)));
  const address = h('input', { type: 'text', name: 'address', value: filters.address, autocomplete: 'off', spellcheck: 'false' });
  const from = h('input', { type: 'datetime-local', name: 'from', value: localText(filters.from) });
  const to = h('input', { type: 'datetime-local', name: 'to', value: localText(filters.to) });
  return h('form', {
    class: 'decision-filters', role: 'search', 'aria-label': 'Filter the decisions',
    onsubmit: (e) => {
      e.preventDefault();
      const period = { from: fromLocal(from.value), to: fromLocal(to.value) };
      setError(from, period.from ? '' : 'Give a start');
      setError(to, period.to ? '' : 'Give an end');
      if (!period.from || !period.to) return;
      if (period.from >= period.to) return setError(to, 'The end must be after the start');
      location.hash = `${base(scenarioId)}?${queryOf({ ...project, verdict: verdict.value, address: address.value.trim(), ...period })}`;
    },
  },
  h('div', { class: 'filters' },
    field('Verdict', verdict),
    field('Address', address, { hint: 'As the execution was sent (same case).' }),
    field('From (your time)', from),
    field('To (your time)', to)),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply filters'),
    h('a', { href: `${base(scenarioId)}${project.projectId === undefined ? '' : `?${queryOf(project)}`}`, class: 'button-link' }, 'Last 7 days, any verdict')));
}

/** The filtered executions, newest first, a page at a time; answers the status line. */
async function executionList(scenarioId, filters, project, params, box) {
  const body = h('tbody');
  const more = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Show more');
  const table = h('table', {}, h('caption', { class: 'hint' }, 'Executions, newest first'),
    h('thead', {}, h('tr', {}, ['Time', 'Verdict', 'Address', 'Revision', 'Execution'].map((c) => h('th', { scope: 'col' }, c)))), body);
  let shown = 0;
  let cursor = null;
  const detail = (x) => `${base(scenarioId)}/${enc(x.executionId)}${params.toString() ? `?${params}` : ''}`;
  const load = async () => {
    const q = withProject(queryOf(filters, { limit: '50', ...(cursor && { cursor }) }), project);
    const r = await api('GET', `/compliance/scenarios/${enc(scenarioId)}/executions?${q}`);
    if (!r.ok) {
      box.replaceChildren(alertOf(r));
      return problemText(r);
    }
    body.append(...r.data.items.map((x) => h('tr', {},
      h('td', {}, when(x.createdAt)),
      h('td', {}, h('span', { class: `badge verdict-${x.verdict}` }, x.verdict)),
      h('td', {}, h('code', {}, x.address)),
      h('td', {}, String(x.scenarioRevision)),
      h('td', {}, h('a', { href: detail(x), 'aria-label': `Execution ${x.executionId}` }, x.executionId.slice(0, 8))))));
    shown += r.data.items.length;
    cursor = r.data.nextCursor;
    more.hidden = !cursor;
    return `${shown} execution${shown === 1 ? '' : 's'} shown${cursor ? ', more follow' : ''}`;
  };
  more.addEventListener('click', async () => {
    more.disabled = true;
    const said = await load();
    more.disabled = false;
    box.querySelector('[role="status"]')?.replaceChildren(said);
  });
  box.replaceChildren(h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Executions table' }, table),
    h('div', { class: 'actions' }, more), h('p', { class: 'hint', role: 'status' }));
  const said = await load();
  if (shown === 0 && !cursor) box.replaceChildren(h('p', {}, 'No execution matches these filters.'));
  return said;
}

/** uPlot and its stylesheet, loaded once and only by this page. */
let plotting;
function uPlot() {
  if (!plotting) {
    document.head.append(h('link', { rel: 'stylesheet', href: '/console/vendor/uPlot.min.css' }));
    plotting = import('/console/vendor/uPlot.esm.js').then((m) => m.default);
  }
  return plotting;
}

/** The counts of the period from the summary route, as two charts each with its table; answers the charts drawn. */
async function charts(scenarioId, filters, project, box) {
  const bucket = Date.parse(filters.to) - Date.parse(filters.from) <= HOURLY_UP_TO ? 'hour' : 'day';
  const q = withProject(queryOf(filters, { bucket }), project);
  const r = await api('GET', `/compliance/scenarios/${enc(scenarioId)}/executions/summary?${q}`);
  if (!r.ok) return box.replaceChildren(alertOf(r));
  const { buckets, rules, totals } = r.data;
  const overTimeId = uid('chart');
  const rulesId = uid('chart');
  const overTime = h('div', { class: 'chart', role: 'img', 'aria-labelledby': overTimeId });
  const failing = h('div', { class: 'chart', role: 'img', 'aria-labelledby': rulesId });
  const filled = buckets.filter((b) => VERDICTS.some((v) => b[v] > 0));
  const label = (start) => (bucket === 'hour' ? new Date(start).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' }) : new Date(start).toLocaleDateString([], { timeZone: 'UTC' }));
  box.replaceChildren(
    h('figure', {},
      h('figcaption', { id: overTimeId }, `Verdicts per ${bucket} (UTC${bucket === 'hour' ? ', shown in your time' : ''}): ${VERDICTS.map((v) => `${totals[v]} ${v}`).join(', ')}. The table below gives the numbers.`),
      h('ul', { class: 'chart-key', 'aria-hidden': 'true' }, VERDICTS.map((v) => h('li', { class: `key-${v}` }, v))),
      overTime,
      h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Verdicts per bucket table' },
        h('table', { class: 'verdict-table' },
          h('caption', { class: 'hint' }, `Verdicts per ${bucket}; ${bucket}s without executions are left out`),
          h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, bucket === 'hour' ? 'Hour' : 'Day'), VERDICTS.map((v) => h('th', { scope: 'col' }, v)))),
          h('tbody', {}, filled.map((b) => h('tr', {}, h('th', { scope: 'row' }, label(b.start)), VERDICTS.map((v) => h('td', {}, String(b[v])))))),
          h('tfoot', {}, h('tr', {}, h('th', { scope: 'row' }, 'Total'), VERDICTS.map((v) => h('td', {}, String(totals[v])))))))),
    h('figure', {},
      h('figcaption', { id: rulesId }, rules.length
        ? `Rules that fail most: ${rules.slice(0, 3).map((x) => `${x.id} (${x.notValid} not-valid)`).join(', ')}. The table below gives the numbers.`
        : 'No rule failed in this period.'),
      rules.length ? failing : '',
      rules.length
        ? h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Failing rules table' },
          h('table', { class: 'rules-table' }, h('caption', { class: 'hint' }, 'Rules that fail most, most not-valid first'),
            h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Rule'), h('th', { scope: 'col' }, 'Not valid'), h('th', { scope: 'col' }, 'Error'))),
            h('tbody', {}, rules.map((x) => h('tr', {}, h('th', { scope: 'row' }, x.id), h('td', {}, String(x.notValid)), h('td', {}, String(x.error)))))))
        : ''));
  let Plot;
  try {
    Plot = await uPlot();
  } catch (err) {
    overTime.replaceChildren(h('p', { class: 'alert' }, `The chart could not be drawn (${err}); the table gives the numbers.`));
    return;
  }
  const width = () => Math.max(240, Math.min(box.clientWidth, 960));
  const xs = buckets.map((b) => Date.parse(b.start) / 1000);
  const drawn = [new Plot({
    width: width(), height: 240, legend: { show: false }, cursor: { show: false },
    // Days on a UTC axis, as the buckets and their table (hours in local time, as their table).
    ...(bucket === 'day' && { tzDate: (ts) => Plot.tzDate(new Date(ts * 1000), 'Etc/UTC') }),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    series: [{}, ...VERDICTS.map((v) => ({ label: v, stroke: COLORS[v], width: 2, points: { show: true, size: 6, fill: COLORS[v] } }))],
    axes: [buckets.length <= 16 ? { splits: () => xs } : {}, { label: 'Executions', incrs: WHOLE }],
  }, [xs, ...VERDICTS.map((v) => buckets.map((b) => b[v]))], overTime)];
  if (!rules.length) return drawn;
  const shownRules = rules.slice(0, 10);
  const index = shownRules.map((_x, i) => i);
  drawn.push(new Plot({
    width: width(), height: 220, legend: { show: false }, cursor: { show: false },
    scales: { x: { time: false, range: [-0.5, shownRules.length - 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
    series: [{}, { label: 'not-valid', fill: COLORS.failed, stroke: COLORS.failed, paths: Plot.paths.bars({ size: [0.6, 64] }), points: { show: false } }],
    axes: [{ splits: () => index, values: (_u, splits) => splits.map((i) => shownRules[i]?.id ?? '') }, { label: 'Not valid', incrs: WHOLE }],
  }, [index, shownRules.map((x) => x.notValid)], failing));
  return drawn;
}

/** The filtered period as a file: fetched with the token (a link cannot carry it), handed to the browser as a Blob. */
function exportPanel(scenarioId, filters, project) {
  const format = h('select', { name: 'format' }, option('csv', 'CSV'), option('ndjson', 'NDJSON'));
  const status = h('p', { class: 'status', role: 'status' });
  const button = h('button', { type: 'button' }, 'Download the filtered period');
  button.addEventListener('click', async () => {
    button.disabled = true;
    status.textContent = 'Preparing the file…';
    try {
      const q = queryOf({ from: filters.from, to: filters.to, scenarioId, verdict: filters.verdict, address: filters.address, format: format.value });
      if (project.projectId !== undefined) q.set('projectId', project.projectId);
      const get = () => fetch(`/compliance/executions/export?${q}`, { headers: { authorization: `Bearer ${session.get() ?? ''}` }, cache: 'no-store' });
      let res = await get();
      let problem = res.ok ? null : await res.json().catch(() => null);
      // A token of several projects names one: the scenario's own ('' for none).
      if (problem?.errors?.some((e) => e.field === 'querystring.projectId')) {
        const scenario = await api('GET', `/compliance/scenarios/${enc(scenarioId)}`);
        if (scenario.ok) {
          q.set('projectId', scenario.data.input.projectId ?? '');
          res = await get();
          problem = res.ok ? null : await res.json().catch(() => null);
        }
      }
      if (!res.ok) {
        status.textContent = `The export failed: ${problemText({ status: res.status, data: problem })}`;
        return;
      }
      const blob = await res.blob();
      const url = URL.createObjectURL(blob);
      const link = h('a', { href: url, download: `decisions-${scenarioId}-${filters.from.slice(0, 10)}.${format.value}`, hidden: true });
      document.body.append(link);
      link.click();
      link.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      status.textContent = res.headers.get('link')
        ? 'Downloaded the first part only: more records follow. Narrow the period or the filters to get them all.'
        : 'Downloaded.';
    } catch (err) {
      status.textContent = `The export failed: ${err}`;
    } finally {
      button.disabled = false;
    }
  });
  return h('section', { 'aria-labelledby': 'decisions-export' }, h('h2', { id: 'decisions-export' }, 'Export'),
    h('p', { class: 'hint' }, 'The executions of the filtered period, as evidence: ids, revision, address, verdict, each rule\'s status and the credentials\' digests (never their contents).'),
    h('div', { class: 'row' }, field('Format', format, { className: 'narrow' })), h('div', { class: 'actions' }, button), status);
}

/** One execution: its verdict, time, address, the revision it ran and each rule's result with its reasons; no credential content. */
async function oneExecution(show, scenarioId, executionId, params) {
  const back = h('p', {}, h('a', { href: `${base(scenarioId)}${params.toString() ? `?${params}` : ''}` }, 'Back to the decisions'));
  const r = await api('GET', `/compliance/executions/${enc(executionId)}`);
  if (!r.ok) return show(`Execution ${executionId}`, back, alertOf(r));
  const x = r.data;
  const row = (term, ...value) => [h('dt', {}, term), h('dd', {}, ...value)];
  show(`Execution ${executionId}`, back,
    h('dl', { class: 'facts' },
      row('Verdict', h('span', { class: `badge verdict-${x.verdict}` }, x.verdict)),
      row('State', x.state),
      row('Time', `${when(x.createdAt)} (`, h('code', {}, x.createdAt), ')'),
      row('Address', h('code', {}, x.address)),
      row('Scenario revision', h('a', { href: `#/scenarios/${enc(x.scenarioId)}/revisions/${x.scenarioRevision}` }, `Revision ${x.scenarioRevision}`)),
      row('Credentials presented', `${x.credentials.length} (the audit log keeps each one's id and digest, never its contents)`)),
    h('h2', {}, 'Results per rule'),
    ...x.results.map((res) => {
      const id = uid('rule');
      const status = res.result?.status ?? 'error';
      const reasons = res.result?.result?.reasons ?? [];
      const query = res.result?.query ?? {};
      return h('article', { class: `result ${status}`, 'aria-labelledby': id },
        h('h3', { id }, `Rule ${res.objectId}: `, h('span', { class: `badge ${status}` }, status)),
        h('p', {}, 'Asked: ', h('code', {}, [query.type, query.attribute, query.operator].filter(Boolean).join(' '))),
        reasons.length ? h('ul', { class: 'reasons' }, reasons.map((m) => h('li', {}, m))) : h('p', { class: 'hint' }, 'No reason given.'));
    }));
}
