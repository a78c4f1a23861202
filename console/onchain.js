// OnChainZKP in the editor: the scenario's deployments (status, chain, verifier, transactions, each rule's request),
// deploy (POST …/deployments, then its Location followed until final) and retire (DELETE).
import { api, problemText } from './api.js';
import { field, h, uid } from './dom.js';

const FINAL = new Set(['Deployed', 'DeploymentFailed', 'Deprecated']);
/** Follow-up reads: 1 s, doubling to 15 s. */
const FIRST_WAIT_MS = 1000;
const LONGEST_WAIT_MS = 15_000;

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
    h('h4', { id }, `Deployment ${d.id}: `, h('span', { class: `badge ${d.status === 'DeploymentFailed' ? 'not-valid' : d.status === 'Deployed' ? 'valid' : ''}` }, d.status ?? 'no status')),
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
  const status = h('p', { class: 'status', role: 'status' });
  const alert = h('div', { class: 'alert', role: 'alert' });
  const chain = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false', placeholder: 'eip155:80002' });
  const section = h('section', { 'aria-labelledby': 'deployments-heading' },
    h('h2', { id: 'deployments-heading' }, 'Deployments'),
    list,
    canWrite
      ? h('div', {},
        h('div', { class: 'row' }, field('Chain to deploy to', chain, { pointer: '/chain', hint: 'CAIP-2; empty: the service\'s default chain' })),
        h('div', { class: 'actions' }, h('button', { type: 'button', onclick: deploy }, 'Deploy')))
      : h('p', { class: 'hint' }, 'This token may not deploy (scenarios:write).'),
    alert, status);
  // Leaving the page stops following: the next read is not made.
  let left = false;
  const leave = () => { left = true; window.removeEventListener('hashchange', leave); };
  window.addEventListener('hashchange', leave);
  const alive = () => !left && section.isConnected;

  function render(input) {
    const deployments = input.smartContractDeployments ?? [];
    list.replaceChildren(
      deployments.length === 0 ? h('p', { class: 'hint' }, 'Not deployed: no verifier contract holds these rules yet.') : '',
      ...deployments.map((d) => deploymentView(d, canWrite && d.status === 'Deployed'
        ? h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => retire(d) }, `Retire ${d.id}`))
        : '')),
      h('h3', {}, 'Rules and their requests'), rulesTable(input));
  }

  async function refresh() {
    const fresh = await reload();
    if (fresh) render(fresh.input);
  }

  async function deploy() {
    alert.replaceChildren();
    if (dirty()) {
      alert.replaceChildren(h('p', {}, 'Save your changes first: Deploy deploys the scenario as saved.'));
      return;
    }
    status.textContent = 'Deploying…';
    const body = chain.value.trim() === '' ? {} : { chain: chain.value.trim() };
    const r = await api('POST', `${path}/deployments${query}`, { body });
    if (!r.ok) {
      status.textContent = '';
      alert.replaceChildren(h('p', {}, problemText(r)), ...(r.data?.errors ?? []).map((e) => h('p', {}, `${e.field}: ${e.message}`)));
      return;
    }
    await refresh();
    follow(r.headers.get('location'), r.data);
  }

  /** Reads the deployment at `location` until it is final, waiting longer each time; stops when the page is left. */
  async function follow(location, first) {
    let d = first;
    let wait = FIRST_WAIT_MS;
    if (!location) return;
    while (!FINAL.has(d?.status)) {
      status.textContent = `Deployment ${d?.id ?? ''} is ${d?.status ?? 'on its way'}: following it (next look in ${Math.round(wait / 1000)} s)…`;
      await new Promise((resolve) => setTimeout(resolve, wait));
      if (!alive()) return;
      const r = await api('GET', `${location}${location.includes('?') ? '' : query}`);
      if (!alive()) return;
      if (r.ok) {
        if (r.data.status !== d?.status) await refresh();
        d = r.data;
      }
      wait = Math.min(wait * 2, LONGEST_WAIT_MS);
    }
    if (!alive()) return;
    await refresh();
    status.textContent = `Deployment ${d.id} is ${d.status}${d.errorMessage ? `: ${d.errorMessage}` : ''}.`;
  }

  async function retire(d) {
    alert.replaceChildren();
    const r = await api('DELETE', `${path}/deployments/${encodeURIComponent(d.id)}${query}`);
    if (!r.ok) { alert.replaceChildren(h('p', {}, problemText(r))); return; }
    await refresh();
    status.textContent = `Deployment ${d.id} is ${r.data.status}.`;
  }

  render(record.input);
  // A deployment on its way when the page opens is followed too.
  const started = (record.input.smartContractDeployments ?? []).find((d) => d.status === 'DeploymentStarted');
  if (started) follow(`${path}/deployments/${encodeURIComponent(started.id)}`, started);
  return section;
}
