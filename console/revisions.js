import { api, problemText } from './api.js';
import { field, h, option, uid } from './dom.js';
import { diffInputs, shown, summarize } from './revision-diff.js';

const enc = encodeURIComponent;
const STATES = {
  live: 'Applied: went live when written',
  proposed: 'Proposed: waiting for approval',
  approved: 'Approved: went live on approval',
  rejected: 'Rejected: never went live',
};
/** Pages of the API's list (oldest first) read before the page stops and says the history is incomplete. */
const MAX_PAGES = 1000;
/** Revisions read back, one by one, for the live one a directly written revision changed. */
const MAX_LOOKBACK = 50;

/** The API's answer as it gives it: title, detail and the code to look up. */
const answerText = (r) => `${problemText(r)}${r.data?.code ? ` (${r.data.code})` : ''}`;
const alertBox = () => h('div', { class: 'alert rev-problem', role: 'alert' });
const when = (t) => (t ? h('time', { datetime: t }, new Date(t).toLocaleString()) : '');

/** Follows the API's cursor to the end (at most MAX_PAGES pages), telling `progress` how many are read. */
async function loadAll(page, progress) {
  const items = [];
  let cursor = null;
  for (let i = 0; i < MAX_PAGES; i++) {
    const r = await api('GET', at(page, `${page.base}/revisions?limit=100${cursor ? `&cursor=${enc(cursor)}` : ''}`));
    if (!r.ok) return { error: r, items };
    items.push(...r.data.items);
    cursor = r.data.nextCursor;
    if (!cursor) return { items, complete: true };
    progress(items.length);
  }
  return { items, complete: false };
}

/** A revision's input: the `content` the API keeps whole. */
const inputOf = (rev) => rev?.content?.input ?? {};

/**
 * A scenario's revisions. `rest` '' : the history (newest first), the proposals waiting, and a diff of any two
 * (`?from=&to=`); `rest` a number: that revision, its change from the one before, the decision on a proposal and its
 * shadow run. `notice`: what the last action did, said once the page is shown.
 */
export async function revisionsView(show, scenarioId, { rest = '', params = new URLSearchParams(), notice = '' } = {}) {
  const base = `/compliance/scenarios/${enc(scenarioId)}`;
  // A token of several projects may hold the id in more than one: every call and link names the route's project.
  const projectId = params.get('projectId');
  const [scenario, me] = await Promise.all([api('GET', at({ projectId }, base)), api('GET', '/compliance/me')]);
  if (!scenario.ok) return show(`Revisions of ${scenarioId}`, h('p', { class: 'alert', role: 'alert' }, problemText(scenario)));
  const page = {
    show, scenarioId, base, rest, params, projectId,
    live: scenario.data.revision,
    // Without GET /compliance/me (404: an older service) every action is offered and the API's answer shown; any other
    // failure is said, and Approve left out (it could be the author's).
    me: me.ok ? me.data : null,
    meProblem: me.ok || me.status === 404 ? null : me,
    revisions: [],
    again: (message) => revisionsView(show, scenarioId, { rest, params, notice: message }),
  };
  const status = h('p', { class: 'status', role: 'status' });
  if (/^[1-9]\d*$/.test(rest)) await revisionPage(page, Number(rest), status);
  else await historyPage(page, status);
  // Filled after the page is in place, so a screen reader announces it.
  if (notice) setTimeout(() => { status.textContent = notice; }, 50);
}

const may = (page, scope) => page.me === null || page.me.scopes.includes(scope);
/** A JWT without `sub` shares its subject with every such token of its issuer: never "you". */
const mine = (page, subject) => page.me !== null && page.me.named !== false && page.me.subject === subject;
const authorText = (page, subject) => (subject === null ? 'unknown (written before revisions were kept)' : mine(page, subject) ? `${subject} (you)` : subject);
/** `url` (an API path or a console link) with the page's project added to its query. */
const at = (page, url) => (page.projectId === null ? url : `${url}${url.includes('?') ? '&' : '?'}projectId=${enc(page.projectId)}`);
const revisionLink = (page, n, label = `Revision ${n}`) => h('a', { href: at(page, `#/scenarios/${enc(page.scenarioId)}/revisions/${n}`) }, label);
const compareHref = (page, from, to) => at(page, `#/scenarios/${enc(page.scenarioId)}/revisions?from=${from}&to=${to}`);

const wentLive = (r) => r.state === 'live' || r.state === 'approved';

/** The revision a change is read from: a proposal's base, else the one live before it (in the whole list). */
function previousOf(page, rev) {
  if (rev.baseRevision !== null) return rev.baseRevision;
  const before = page.revisions.filter((r) => r.revision < rev.revision && wentLive(r));
  return before.length ? before[before.length - 1].revision : null;
}

/** previousOf read from the API: a proposal's base, else the revisions before it read back until one went live. */
async function previousRead(page, rev) {
  if (rev.baseRevision !== null) return { n: rev.baseRevision, ...(await revisionOf(page, rev.baseRevision)) };
  for (let n = rev.revision - 1; n >= 1 && n >= rev.revision - MAX_LOOKBACK; n--) {
    const r = await revisionOf(page, n);
    // 404: not kept (written before revisions were), so none before it is either.
    if (r.error?.status === 404) return { n: null };
    if (r.error || wentLive(r.rev)) return { n, ...r };
  }
  return rev.revision > MAX_LOOKBACK + 1 ? { n: null, far: true } : { n: null };
}

function stateText(page, rev) {
  const parts = [STATES[rev.state] ?? rev.state];
  if (rev.revision === page.live && rev.state !== 'proposed') parts.push('the live revision now');
  if (rev.state === 'proposed' && rev.baseRevision !== page.live) parts.push(`stale: made from revision ${rev.baseRevision}, revision ${page.live} is live now`);
  return parts.join('; ');
}

async function revisionOf(page, n) {
  const kept = page.revisions.find((r) => r.revision === n);
  if (kept) return { rev: kept };
  const r = await api('GET', at(page, `${page.base}/revisions/${n}`));
  return r.ok ? { rev: r.data } : { error: r };
}

async function historyPage(page, status) {
  const { scenarioId } = page;
  const list = h('ul', { class: 'rev-history' });
  const waitingBox = h('div', {}, h('p', {}, 'Reading the history…'));
  const problem = alertBox();
  const picks = [h('select', { name: 'from' }), h('select', { name: 'to' })];
  const diffBox = h('div', {});

  const render = () => {
    const newest = [...page.revisions].reverse();
    list.replaceChildren(...newest.map((rev) => historyEntry(page, rev)));
    const [from, to] = [Number(page.params.get('from')), Number(page.params.get('to'))];
    const defaults = [newest[1]?.revision ?? newest[0]?.revision, newest[0]?.revision];
    picks.forEach((select, i) => select.replaceChildren(...newest.map((rev) =>
      option(String(rev.revision), `Revision ${rev.revision} (${rev.state})`, rev.revision === ([from, to][i] || defaults[i])))));
    const waiting = page.revisions.filter((r) => r.state === 'proposed');
    waitingBox.replaceChildren(waiting.length === 0
      ? h('p', {}, 'No proposal is waiting for approval.')
      : h('ul', {}, waiting.map((rev) => h('li', {}, revisionLink(page, rev.revision),
        `, proposed by ${authorText(page, rev.author)} from revision ${rev.baseRevision}`,
        rev.baseRevision !== page.live ? ` (stale: revision ${page.live} is live now)` : ''))));
  };

  const compare = h('form', {
    class: 'rev-compare',
    onsubmit: (e) => {
      e.preventDefault();
      location.hash = compareHref(page, picks[0].value, picks[1].value);
    },
  }, h('div', { class: 'row' }, field('Compare revision', picks[0]), field('with revision', picks[1])),
  h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Compare')));
  status.textContent = 'Reading the history…';
  page.show(`Revisions of ${scenarioId}`,
    status, problem,
    h('p', {}, `Revision ${page.live} is live. Every create and change is kept; a change in a project that requires approval is a proposal until another reviewer approves it.`),
    h('section', { 'aria-labelledby': 'rev-waiting' }, h('h2', { id: 'rev-waiting' }, 'Waiting for approval'), waitingBox),
    h('section', { 'aria-labelledby': 'rev-compare' }, h('h2', { id: 'rev-compare' }, 'Compare two revisions'), compare, diffBox),
    h('section', { 'aria-labelledby': 'rev-list' }, h('h2', { id: 'rev-list' }, 'History, newest first'), list));

  const read = await loadAll(page, (n) => { status.textContent = `Reading the history… ${n} revisions so far`; });
  page.revisions = read.items;
  render();
  status.textContent = read.complete ? `${read.items.length} revisions` : '';
  if (read.error) problem.replaceChildren(h('p', {}, `The history is incomplete: ${read.items.length} revisions read, then ${problemText(read.error)}`));
  else if (!read.complete) problem.replaceChildren(h('p', {}, `The history is incomplete: the page stops after ${MAX_PAGES} pages of the list (${read.items.length} revisions, oldest first).`));
  const [from, to] = [page.params.get('from'), page.params.get('to')];
  if (from && to) showDiff(page, Number(from), Number(to), diffBox);
}

function historyEntry(page, rev) {
  const previous = previousOf(page, rev);
  const before = previous === null ? undefined : page.revisions.find((r) => r.revision === previous);
  const summary = rev.patch === null && previous === null
    ? `Created with ${inputOf(rev).queryConfigurations?.length ?? 0} rule(s)`
    : before ? summarize(diffInputs(inputOf(before), inputOf(rev))) : `Changed: ${Object.keys(rev.patch ?? {}).join(', ') || 'nothing'}`;
  const id = uid('rev');
  return h('li', { class: `rev-entry rev-${rev.state}` },
    h('article', { 'aria-labelledby': id },
      h('h3', { id }, revisionLink(page, rev.revision), ` · ${rev.state}`),
      h('dl', { class: 'rev-meta' },
        h('dt', {}, 'State'), h('dd', {}, stateText(page, rev)),
        h('dt', {}, 'Author'), h('dd', {}, authorText(page, rev.author)),
        h('dt', {}, rev.baseRevision === null ? 'Written' : 'Proposed'), h('dd', {}, when(rev.createdAt)),
        rev.decidedAt ? [h('dt', {}, rev.state === 'rejected' ? 'Rejected' : 'Approved'), h('dd', {}, when(rev.decidedAt), ` by ${authorText(page, rev.decidedBy)}`)] : '',
        h('dt', {}, 'Summary'), h('dd', {}, summary)),
      previous === null ? '' : h('p', {}, h('a', { href: compareHref(page, previous, rev.revision) }, `Compare revision ${rev.revision} with revision ${previous}`))));
}

async function showDiff(page, from, to, box) {
  box.replaceChildren(h('p', { class: 'status' }, 'Loading the two revisions…'));
  const [a, b] = await Promise.all([revisionOf(page, from), revisionOf(page, to)]);
  if (a.error || b.error) { box.replaceChildren(h('p', { class: 'alert', role: 'alert' }, problemText(a.error ?? b.error))); return; }
  const heading = h('h3', { tabindex: '-1' }, `Revision ${from} compared with revision ${to}`);
  box.replaceChildren(heading, diffView(a.rev, b.rev, 4));
  heading.focus();
}

/** Side by side: a table per part, a header for each side, and the change in words (never colour alone); `level`: its rules' headings. */
function diffView(a, b, level) {
  const diff = diffInputs(inputOf(a), inputOf(b));
  const [left, right] = [`Revision ${a.revision}`, `Revision ${b.revision}`];
  const table = (caption, rows, hidden = false) => h('div', { class: 'rev-diff-wrap' }, h('table', { class: 'rev-diff', role: 'table' },
    h('caption', { class: hidden ? 'rev-sr' : undefined }, caption),
    h('thead', { role: 'rowgroup' }, h('tr', { role: 'row' }, ['Field', left, right, 'Change'].map((c) => h('th', { scope: 'col', role: 'columnheader' }, c)))),
    h('tbody', { role: 'rowgroup' }, rows.map((r) => h('tr', { role: 'row', class: `rev-${r.change}` },
      h('th', { scope: 'row', role: 'rowheader' }, h('code', {}, r.path)),
      h('td', { role: 'cell', 'data-label': left }, h('code', {}, shown(r.a))),
      h('td', { role: 'cell', 'data-label': right }, h('code', {}, shown(r.b))),
      h('td', { role: 'cell', 'data-label': 'Change' }, r.change,
        r.items
          ? [r.items.added.length ? h('span', { class: 'rev-items' }, `added ${r.items.added.map(shown).join(', ')}`) : '',
              r.items.removed.length ? h('span', { class: 'rev-items' }, `removed ${r.items.removed.map(shown).join(', ')}`) : '']
          : ''))))));
  const counts = `${diff.fields.length} field(s) of the scenario and ${diff.rules.length} rule(s) differ; ${diff.unchangedRules} rule(s) unchanged.`;
  return h('div', { class: 'rev-diff-view' },
    h('p', {}, counts, ` Digests: ${a.digest.slice(0, 12)}… and ${b.digest.slice(0, 12)}…${a.digest === b.digest ? ' (the same rules and fields)' : ''}.`),
    diff.fields.length ? table('The scenario\'s fields', diff.fields) : '',
    diff.rules.map((r) => h('section', { class: 'rev-rule' }, h(`h${level}`, {}, `Rule ${r.id}: ${r.change}`),
      table(`Rule ${r.id}, ${r.change}, field by field`, r.rows, true))));
}

async function revisionPage(page, n, status) {
  const { rev, error } = await revisionOf(page, n);
  const title = `Revision ${n} of ${page.scenarioId}`;
  if (error) return page.show(title, h('p', { class: 'alert', role: 'alert' }, problemText(error)), h('p', {}, h('a', { href: at(page, `#/scenarios/${enc(page.scenarioId)}/revisions`) }, 'All revisions')));
  const before = await previousRead(page, rev);
  const previous = before.n;
  const changes = h('div', {});
  if (before.far) changes.append(h('p', {}, `No revision live before it among the ${MAX_LOOKBACK} before it: compare it from the history.`));
  else if (previous === null) changes.append(h('p', {}, 'The first revision kept: nothing to compare it with.'));
  else if (before.error) changes.append(h('p', { class: 'alert' }, `Revision ${previous}: ${problemText(before.error)}`));
  else changes.append(diffView(before.rev, rev, 3));

  page.show(title,
    status,
    h('p', {}, h('a', { href: at(page, `#/scenarios/${enc(page.scenarioId)}/revisions`) }, 'All revisions'),
      previous === null ? '' : [' · ', h('a', { href: compareHref(page, previous, n) }, 'Compare with another revision')]),
    h('dl', { class: 'rev-meta' },
      h('dt', {}, 'State'), h('dd', {}, stateText(page, rev)),
      h('dt', {}, 'Author'), h('dd', {}, authorText(page, rev.author)),
      h('dt', {}, rev.baseRevision === null ? 'Written' : 'Proposed'), h('dd', {}, when(rev.createdAt)),
      rev.baseRevision === null ? '' : [h('dt', {}, 'Made from'), h('dd', {}, revisionLink(page, rev.baseRevision))],
      rev.decidedAt ? [h('dt', {}, rev.state === 'rejected' ? 'Rejected' : 'Approved'), h('dd', {}, when(rev.decidedAt), ` by ${authorText(page, rev.decidedBy)}`)] : '',
      h('dt', {}, 'Digest'), h('dd', {}, h('code', {}, rev.digest))),
    rev.state === 'proposed' ? decision(page, rev, status) : '',
    h('section', { 'aria-labelledby': 'rev-changes' }, h('h2', { id: 'rev-changes' }, previous === null ? 'Changes' : `Changes from revision ${previous}`), changes),
    rev.state === 'proposed' || rev.state === 'approved' || rev.state === 'rejected' ? await shadowSection(page, rev) : '');
}

/** Approve and reject, offered as the API allows them: the scope, and never the author's approval. */
function decision(page, rev, status) {
  const problem = alertBox();
  const isAuthor = mine(page, rev.author);
  const unnamed = page.me?.named === false;
  const mayDecide = may(page, 'scenarios:approve');
  const stale = rev.baseRevision !== page.live;
  const act = (verb) => async (e) => {
    const button = e.currentTarget;
    button.disabled = true;
    problem.replaceChildren();
    status.textContent = verb === 'approve' ? 'Approving…' : 'Rejecting…';
    const r = await api('POST', at(page, `${page.base}/revisions/${rev.revision}/${verb}`));
    if (r.ok) return page.again(verb === 'approve' ? `Revision ${rev.revision} approved: it is live now.` : `Revision ${rev.revision} rejected: it will never go live.`);
    status.textContent = '';
    button.disabled = false;
    problem.replaceChildren(h('p', {}, answerText(r)), advice(page, r));
  };
  const buttons = [];
  if (mayDecide && !isAuthor && !unnamed && !page.meProblem) buttons.push(h('button', { type: 'button', onclick: act('approve') }, `Approve revision ${rev.revision}`));
  if (mayDecide) buttons.push(h('button', { type: 'button', class: 'secondary', onclick: act('reject') }, isAuthor ? `Withdraw (reject) revision ${rev.revision}` : `Reject revision ${rev.revision}`));
  return h('section', { 'aria-labelledby': 'rev-decision' }, h('h2', { id: 'rev-decision' }, 'Decision'),
    stale
      ? h('p', { class: 'rev-warning' }, `Stale: this proposal was made from revision ${rev.baseRevision}, and revision ${page.live} is live now. ` +
      'The API refuses to approve it; make the change again in the rules editor (it is proposed against the live revision) and reject this one.')
      : '',
    page.meProblem ? h('p', { class: 'alert', role: 'alert' }, `Who this token is could not be read (${answerText(page.meProblem)}): Approve is left out, as it may be your own proposal. Reload the page to try again.`) : '',
    isAuthor ? h('p', {}, `You proposed this revision: another reviewer must approve it (the API refuses its author's approval).${mayDecide ? ' You may withdraw it.' : ''}`) : '',
    mayDecide && unnamed ? h('p', {}, 'Your token names no subject (a JWT without a sub claim): the API refuses its approval (SCS_APPROVER_UNNAMED). Sign in with a token whose sub names you to approve.') : '',
    mayDecide ? '' : h('p', {}, 'Your token lacks the scope scenarios:approve: a reviewer holding it approves or rejects this proposal.'),
    buttons.length ? h('div', { class: 'actions' }, buttons) : '',
    problem);
}

/** What to do after a refusal, where the API's code says it. */
function advice(page, r) {
  const editor = h('a', { href: at(page, `#/scenarios/${enc(page.scenarioId)}`) }, 'Open the rules editor');
  switch (r.data?.code) {
    case 'SCS_PROPOSAL_STALE':
      return h('p', {}, 'What to do: another revision went live since this proposal was made. ', editor,
        ', make the change again and save it: it is proposed against the live revision. Then reject this stale proposal.');
    case 'SCS_REVISION_NOT_PROPOSED':
      return h('p', {}, 'What to do: it was decided meanwhile; ', h('a', { href: at(page, `#/scenarios/${enc(page.scenarioId)}/revisions`) }, 'reload the revisions'), '.');
    case 'SCS_APPROVER_UNNAMED':
      return h('p', {}, 'What to do: sign in with a token that names its subject (a JWT with a sub claim, or a static token) to approve.');
    case 'SCS_SELF_APPROVAL':
      return h('p', {}, 'What to do: ask another reviewer, with a token of their own holding scenarios:approve, to approve it.');
    default:
      return '';
  }
}

async function shadowSection(page, rev) {
  const problem = alertBox();
  const body = h('div', { 'aria-live': 'polite' });
  const path = `${page.base}/revisions/${rev.revision}/shadow`;
  const controls = h('div', { class: 'actions' });
  const section = h('section', { 'aria-labelledby': 'rev-shadow' }, h('h2', { id: 'rev-shadow' }, 'Shadow run'),
    h('p', { class: 'hint' }, 'In shadow, every execute of the scenario also evaluates this proposal after answering; only whether each rule and the verdict would change is kept.'),
    controls, problem, body);

  const render = (run) => {
    controls.replaceChildren();
    const write = may(page, 'scenarios:write') && rev.state === 'proposed';
    if (write && run?.state !== 'active') controls.append(h('button', { type: 'button', onclick: send('POST') }, run ? 'Start the shadow run again' : 'Start a shadow run'));
    if (write && run?.state === 'active') controls.append(h('button', { type: 'button', class: 'secondary', onclick: send('DELETE') }, 'Stop the shadow run'));
    if (run) controls.append(h('button', { type: 'button', class: 'secondary', onclick: refresh }, 'Refresh the results'));
    body.replaceChildren(run ? shadowResults(page, run, path) : h('p', {}, rev.state === 'proposed' ? 'Not in shadow yet.' : 'It was never in shadow.'));
  };
  const failed = (r) => {
    problem.replaceChildren(h('p', {}, answerText(r)));
  };
  const send = (method) => async (e) => {
    const button = e.currentTarget;
    button.disabled = true;
    problem.replaceChildren();
    const r = await api(method, at(page, path));
    if (r.ok) settle(r.data);
    else { button.disabled = false; failed(r); }
  };
  async function refresh() {
    problem.replaceChildren();
    const r = await api('GET', at(page, path));
    if (r.ok) settle(r.data);
    else failed(r);
  }
  // The button pressed is gone: focus goes to what it changed.
  const settle = (run) => {
    render(run);
    body.querySelector('.rev-headline')?.focus();
  };

  const r = await api('GET', at(page, path));
  if (r.ok) render(r.data);
  else if (r.status === 404 && r.data?.code === 'SCS_SHADOW_NOT_FOUND') render(null);
  else { render(null); failed(r); }
  return section;
}

function shadowResults(page, run, path) {
  const flips = h('ul', { class: 'rev-flips' });
  const more = h('div', {});
  const addFlips = (ids, cursor) => {
    flips.append(...ids.map((x) => h('li', {}, h('a', { href: at(page, `#/scenarios/${enc(page.scenarioId)}/decisions/${enc(x)}`) }, h('code', {}, x)))));
    more.replaceChildren(cursor
      ? h('button', {
        type: 'button', class: 'secondary', onclick: async (e) => {
          e.currentTarget.disabled = true;
          const r = await api('GET', at(page, `${path}?limit=100&cursor=${enc(cursor)}`));
          if (r.ok) addFlips(r.data.flippedExecutions, r.data.nextCursor);
          else more.replaceChildren(h('p', { class: 'alert', role: 'alert' }, problemText(r)));
        },
      }, 'More executions that would flip')
      : '');
  };
  addFlips(run.flippedExecutions, run.nextCursor);
  const side = (s) => (s === null ? 'absent' : s);
  return h('div', { class: 'rev-shadow' },
    h('p', { class: 'rev-headline', tabindex: '-1' }, `${run.flipped} of ${run.compared} compared executions would change verdict` +
      (run.undecided ? `; ${run.undecided} undecided` : '') + (run.skipped ? `; ${run.skipped} skipped (queue full)` : '') + '.'),
    h('dl', { class: 'rev-meta' },
      h('dt', {}, 'State'), h('dd', {}, run.state === 'active' ? 'active: every execute also evaluates this proposal' : 'stopped'),
      h('dt', {}, 'Started'), h('dd', {}, when(run.startedAt), run.startedBy ? ` by ${authorText(page, run.startedBy)}` : ''),
      run.stoppedAt ? [h('dt', {}, 'Stopped'), h('dd', {}, when(run.stoppedAt))] : '',
      h('dt', {}, 'Compared'), h('dd', {}, String(run.compared)),
      h('dt', {}, 'Would flip'), h('dd', {}, String(run.flipped)),
      h('dt', {}, 'Undecided'), h('dd', {}, String(run.undecided)),
      h('dt', {}, 'Skipped'), h('dd', {}, String(run.skipped))),
    run.byRule.length
      ? h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Shadow results by rule' }, h('table', {},
        h('caption', {}, 'By rule: how often its status would differ (live → shadow)'),
        h('thead', {}, h('tr', {}, ['Rule', 'Compared', 'Differs', 'Changes'].map((c) => h('th', { scope: 'col' }, c)))),
        h('tbody', {}, run.byRule.map((x) => h('tr', {},
          h('th', { scope: 'row' }, x.ruleId), h('td', {}, String(x.compared)), h('td', {}, String(x.differs)),
          h('td', {}, x.changes.length ? h('ul', { class: 'rev-changes' }, x.changes.map((c) => h('li', {}, `${side(c.live)} → ${side(c.shadow)}: ${c.count}`))) : 'none'))))))
      : '',
    h('h3', {}, 'Executions whose verdict would flip'),
    run.flippedExecutions.length ? '' : h('p', {}, 'None so far.'),
    flips, more);
}
