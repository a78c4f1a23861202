// OnChainZKP in the editor: the scenario's deployments (status, chain, verifier, transactions, each rule's request),
// deploy (POST …/deployments, then its Location followed until final) and retire (DELETE).
import { api, problemText } from './api.js';
import { field, h, setError, uid } from './dom.js';

const FINAL = new Set(['Deployed', 'DeploymentFailed', 'Deprecated']);
/** Follow-up reads: 1 s, doubling to 15 s. */
const FIRST_WAIT_MS = 1000;
const LONGEST_WAIT_MS = 15_000;
/** Following stops after this long (the page then offers to check again). */
const FOLLOW_FOR_MS = 10 * 60_000;
const STATUSES = new Set([...FINAL, 'DeploymentStarted']);

const cell = (v) => h('td', {}, v === undefined || v === null || v === '' ? '—' : String(v));
const term = (name, value) => (value === undefined || value === null || value === '' ? [] : [h('dt', {}, name), h('dd', {}, value)]);

/** Where each rule stands: its requestId, and the deployment that has it on chain (Deployed) or on its way. */
function rulesTable(input) {
  const deployments = input.smartContractDeployments ?? [];
  const where = (rule) => {
    const id = String(rule.query?.requestId ?? '');
    const holds = (d) => (d.requests ?? []).some((r) => r.queryConfigurationId === rule.id && r.requestId === id);
    const live = deployments.find((d) => d.status === 'Deployed' && (holds(d) || d.requests === undefined));
    if (live) return live.requests === undefined ? `On chain, as deployment ${live.id} says (no request recorded for the rule)` : `On chain (deployment ${live.id})`;
    const coming = deployments.find((d) => d.status === 'DeploymentStarted' && holds(d));
    return coming ? `On its way (deployment ${coming.id})` : 'Not on chain';
  };
  return h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': 'Rules on chain' },
    h('table', {}, h('caption', { class: 'hint' }, 'Each rule\'s request on the verifier'),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Rule'), h('th', { scope: 'col' }, 'Request id'), h('th', { scope: 'col' }, 'On chain'))),
      h('tbody', {}, (input.queryConfigurations ?? []).map((r) => h('tr', {}, cell(r.id), h('td', {}, h('code', {}, String(r.query?.requestId ?? '—'))), cell(where(r)))))));
}

function deploymentView(d, actions) {
  const id = uid('deployment');
  const txs = d.transactions ?? [];
  return h('article', { class: `deployment ${String(d.status ?? '').toLowerCase()}`, 'aria-labelledby': id, dataset: { deployment: d.id } },
    h('h3', { id }, `Deployment ${d.id}: `, h('span', { class: `badge ${d.status === 'DeploymentFailed' ? 'not-valid' : d.status === 'Deployed' ? 'valid' : ''}` }, d.status ?? 'no status')),
    h('dl', {},
      ...term('Chain', d.chain ?? 'the service\'s default'),
      ...term('Verifier contract', d.address ? h('code', {}, d.address) : undefined),
      ...term('Contract', d.contractName),
      ...term('Multi-request', d.multiRequest ? h('code', {}, d.multiRequest.multiRequestId) : undefined),
      ...term('Failure', d.errorMessage)),
    txs.length === 0
      ? h('p', { class: 'hint' }, 'No transaction recorded.')
      : h('div', { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': `Transactions of ${d.id}` },
        h('table', {}, h('caption', { class: 'hint' }, 'Transactions'),
          h('thead', {}, h('tr', {}, ['Id', 'Action', 'Status', 'Hash', 'Block', 'Failure'].map((c) => h('th', { scope: 'col' }, c)))),
          h('tbody', {}, txs.map((t) => h('tr', {}, cell(t.id), cell(t.actionName), cell(t.status),
            h('td', {}, t.txHash ? h('code', {}, t.txHash) : '—'), cell(t.blockNumber), cell(t.errorMessage)))))),
    actions);
}

/**
 * The deployments section of an OnChainZKP scenario. `path`: the scenario's URL, `query`: its ?projectId= (or '');
 * `canWrite`: the token may deploy; `dirty()`: the editor holds unsaved changes (a deploy deploys the saved rules);
 * `reload()`: reads the scenario again and answers its record (the editor takes its new ETag and rules).
 */
export function deploymentsPanel({ record, path, query, canWrite, dirty, reload }) {
  const list = h('div', {});
  const heading = h('h2', { id: 'deployments-heading', tabindex: '-1' }, 'Deployments');
  const status = h('p', { class: 'status', role: 'status' });
  const alert = h('div', { class: 'alert', role: 'alert' });
  const chain = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'eip155:80002' });
  const deployButton = h('button', { type: 'button', onclick: deploy }, 'Deploy');
  const again = h('div', { class: 'actions' });
  // A deploy in flight, or a deployment followed: Deploy waits (the API answers 409 while one is DeploymentStarted).
  let sending = false;
  let following = null;
  let shown = record.input;
  const syncDeploy = (input) => {
    const started = (input.smartContractDeployments ?? []).some((d) => d.status === 'DeploymentStarted');
    deployButton.disabled = sending || following !== null || started;
    deployHint.textContent = started ? 'A deployment is on its way: Deploy is offered again once it is final.' : '';
  };
  const deployHint = h('p', { class: 'hint' });
  const section = h('section', { 'aria-labelledby': 'deployments-heading' },
    heading,
    list,
    canWrite
      ? h('div', {},
        h('div', { class: 'row' }, field('Chain to deploy to', chain, { pointer: '/chain', hint: 'CAIP-2; empty: the service\'s default chain' })),
        h('div', { class: 'actions' }, deployButton), deployHint)
      : h('p', { class: 'hint' }, 'This token may not deploy (scenarios:write).'),
    alert, status, again);
  // Leaving the page stops following: the next read is not made.
  let left = false;
  const leave = () => { left = true; window.removeEventListener('hashchange', leave); };
  window.addEventListener('hashchange', leave);
  const alive = () => !left && section.isConnected;

  function render(input) {
    const deployments = input.smartContractDeployments ?? [];
    shown = input;
    syncDeploy(input);
    list.replaceChildren(
      deployments.length === 0 ? h('p', { class: 'hint' }, 'Not deployed: no verifier contract holds these rules yet.') : '',
      ...deployments.map((d) => deploymentView(d, canWrite && d.status === 'Deployed'
        ? h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: (e) => confirmRetire(d, e.currentTarget) }, `Retire ${d.id}`))
        : '')),
      h('h3', {}, 'Rules and their requests'), rulesTable(input));
  }

  async function refresh() {
    const fresh = await reload();
    if (fresh) render(fresh.input);
  }

  async function deploy() {
    if (sending || following) return;
    alert.replaceChildren();
    setError(chain, '');
    if (dirty()) {
      alert.replaceChildren(h('p', {}, 'Save your changes first: Deploy deploys the scenario as saved.'));
      return;
    }
    sending = true;
    deployButton.disabled = true;
    status.textContent = 'Deploying…';
    const body = chain.value.trim() === '' ? {} : { chain: chain.value.trim() };
    const r = await api('POST', `${path}/deployments${query}`, { body });
    sending = false;
    if (!r.ok) {
      status.textContent = '';
      // A problem naming the chain goes beside its field; the rest is listed.
      const errors = r.data?.errors ?? [];
      const onChain = errors.filter((e) => e.pointer === '/chain').map((e) => e.message);
      if (onChain.length) setError(chain, onChain.join('; '));
      alert.replaceChildren(h('p', {}, problemText(r)), ...errors.filter((e) => e.pointer !== '/chain').map((e) => h('p', {}, `${e.field}: ${e.message}`)));
      syncDeploy(shown);
      return;
    }
    await refresh();
    follow(r.headers.get('location'), r.data);
  }

  /** The follower's end short of a final status: said, with a button to follow again. */
  function stop(message, location, d) {
    following = null;
    status.textContent = message;
    again.replaceChildren(h('button', { type: 'button', class: 'secondary', onclick: () => { again.replaceChildren(); follow(location, d); } }, 'Check again'));
    refresh();
  }

  /**
   * Reads the deployment at `location` until it is final, waiting longer each time; one follower at a time. It stops
   * when the page is left, on a refusal (4xx but 429), an unknown status or after FOLLOW_FOR_MS.
   */
  async function follow(location, first) {
    if (!location || following) return;
    const mine = {};
    following = mine;
    let d = first;
    let wait = FIRST_WAIT_MS;
    const until = Date.now() + FOLLOW_FOR_MS;
    syncDeploy(shown);
    // The role=status text changes with the status only, not with each look.
    status.textContent = `Deployment ${d?.id ?? ''} is ${d?.status ?? 'on its way'}: following it…`;
    while (!FINAL.has(d?.status)) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      if (!alive()) return;
      const r = await api('GET', `${location}${location.includes('?') ? '' : query}`);
      if (!alive()) return;
      if (!r.ok && r.status >= 400 && r.status < 500 && r.status !== 429) return stop(`Stopped following deployment ${d?.id ?? ''}: ${problemText(r)}`, location, d);
      if (r.ok) {
        if (!STATUSES.has(r.data?.status)) return stop(`Stopped following deployment ${d?.id ?? ''}: its status ${String(r.data?.status)} is not one this page knows.`, location, r.data);
        if (r.data.status !== d?.status) {
          await refresh();
          status.textContent = `Deployment ${r.data.id} is ${r.data.status}: following it…`;
        }
        d = r.data;
      }
      if (!FINAL.has(d?.status) && Date.now() + wait > until) return stop(`Deployment ${d?.id ?? ''} is still ${d?.status}: no longer followed.`, location, d);
      wait = Math.min(wait * 2, LONGEST_WAIT_MS);
    }
    following = null;
    if (!alive()) return;
    await refresh();
    status.textContent = `Deployment ${d.id} is ${d.status}${d.errorMessage ? `: ${d.errorMessage}` : ''}.`;
  }

  /** Retire asks first: the verifier stops answering for the deployment's requests. */
  function confirmRetire(d, button) {
    const box = button.parentElement;
    const no = h('button', { type: 'button', class: 'secondary', onclick: () => { box.replaceChildren(button); button.focus(); } }, 'Keep it');
    box.replaceChildren(
      h('p', {}, `Retire ${d.id}? Its requests stop being answered on chain.`),
      h('button', { type: 'button', onclick: (e) => { e.currentTarget.disabled = true; retire(d); } }, `Yes, retire ${d.id}`), no);
    no.focus();
  }

  async function retire(d) {
    alert.replaceChildren();
    const r = await api('DELETE', `${path}/deployments/${encodeURIComponent(d.id)}${query}`);
    if (!r.ok) { await refresh(); alert.replaceChildren(h('p', {}, problemText(r))); heading.focus(); return; }
    await refresh();
    status.textContent = `Deployment ${d.id} is ${r.data.status}.`;
    // The button pressed is gone: focus goes to the section's heading, the status read after it.
    heading.focus();
  }

  render(record.input);
  // A deployment on its way when the page opens is followed too.
  const started = (record.input.smartContractDeployments ?? []).find((d) => d.status === 'DeploymentStarted');
  syncDeploy(record.input);
  if (started) follow(`${path}/deployments/${encodeURIComponent(started.id)}`, started);
  return section;
}
