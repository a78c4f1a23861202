import { api, problemText } from './api.js';
import { field, h, option, setError, uid } from './dom.js';
import { circuitOperators, circuitOptions, issuersField, requestView } from './offchain.js';
import { deploymentsPanel } from './onchain.js';

const TYPES = ['ChallengeQuery', 'OnChainZKP', 'OffChainZKP'];
const OPERATOR_NAMES = {
  $eq: 'equals', $ne: 'does not equal', $lt: 'less than', $lte: 'at most', $gt: 'greater than', $gte: 'at least',
  $in: 'is one of', $nin: 'is none of', $exists: 'exists', $between: 'between', $nonbetween: 'not between',
  $noop: 'holds the type', $sd: 'disclose',
};
const ALL_OPERATORS = Object.keys(OPERATOR_NAMES).filter((o) => o !== '$noop' && o !== '$sd');
const VALUELESS = new Set(['$noop', '$sd']);
/** The form an operator's value takes: operators of one shape can take each other's value. */
const shape = (op) => (VALUELESS.has(op) ? 'none' : op === '$between' || op === '$nonbetween' ? 'pair' : op === '$in' || op === '$nin' ? 'list' : op === '$exists' ? 'flag' : 'one');

/** Every attribute a rule may name, depth first: objects are not comparable, their leaves are. */
function leaves(nodes, out = []) {
  for (const n of nodes) {
    if (n.attributes) leaves(n.attributes, out);
    else out.push(n);
  }
  return out;
}

/** The typed value of a text the user entered, by the attribute's kind. */
function typed(text, kind) {
  const t = text.trim();
  if (kind === 'number' || (kind === 'any' && /^-?\d+(\.\d+)?$/.test(t))) return t === '' ? t : Number(t);
  if (kind === 'boolean') return t === 'true';
  return t;
}

function ruleEditor(held, rule, index, onRemove, nextRequestId, refused, scenarioType, canWrite) {
  const query = rule.query ?? {};
  const zkp = scenarioType === 'OffChainZKP' ? circuitOptions({ ...query, requestId: query.requestId ?? nextRequestId }, index, onCircuit) : null;
  // Says when a circuit change changed the operator (the one chosen is not proved by the new circuit).
  const opNote = h('p', { class: 'hint', role: 'status' });
  const known = new Map(held.map((t) => [t.type, t]));
  const idInput = h('input', { type: 'text', value: rule.id ?? `rule-${index + 1}`, autocomplete: 'off' });
  const typeSelect = h('select', {}, option('', 'Choose a credential type'), held.map((t) => option(t.type, t.type, t.type === query.type)));
  if (query.type && !known.has(query.type)) typeSelect.append(option(query.type, `${query.type} (context not held)`, true));
  const attrSelect = h('select', {});
  const attrText = h('input', { type: 'text', autocomplete: 'off', value: query.attribute ?? '' });
  const opSelect = h('select', {});
  const valueBox = h('div', { class: 'value' });
  const p = (suffix) => `/queryConfigurations/${index}${suffix}`;
  const attrField = field('Attribute', attrSelect, { pointer: p('/query/attribute') });
  const attrTextField = field('Attribute (path)', attrText, { pointer: p('/query/attribute'), hint: 'This type\'s context is not held: any path is accepted unchecked.' });
  let valueControls = [];
  let kind = 'any';

  const attributes = () => leaves(known.get(typeSelect.value)?.attributes ?? []);
  const isOpen = () => !known.has(typeSelect.value) || known.get(typeSelect.value).open;
  const current = () => attributes().find((a) => a.path === attrSelect.value);

  function renderValue(initial) {
    const op = opSelect.value;
    const base = { autocomplete: 'off' };
    const input = (label, v, pointer) => {
      let control;
      if (kind === 'boolean' || op === '$exists') {
        control = h('select', {}, option('true', 'true', v === true || v === undefined), option('false', 'false', v === false));
      } else {
        control = h('input', { ...base, type: kind === 'number' ? 'number' : 'text', step: kind === 'number' ? 'any' : undefined, value: v === undefined ? '' : String(v) });
      }
      valueControls.push(control);
      const hint = kind === 'date' ? 'An ISO 8601 date, e.g. 2000-01-31' : undefined;
      return field(label, control, { pointer, hint });
    };
    valueControls = [];
    if (VALUELESS.has(op)) {
      valueBox.replaceChildren(h('p', { class: 'hint' }, `${op} takes no value.`));
    } else if (op === '$between' || op === '$nonbetween') {
      const [lo, hi] = Array.isArray(initial) ? initial : [];
      valueBox.replaceChildren(h('div', { class: 'row' }, input('Minimum', lo, p('/query/value')), input('Maximum', hi)));
    } else if (op === '$in' || op === '$nin') {
      const control = h('input', { ...base, type: 'text', value: Array.isArray(initial) ? initial.join(', ') : '' });
      valueControls.push(control);
      valueBox.replaceChildren(field('Values', control, { pointer: p('/query/value'), hint: 'Separated by commas' }));
    } else {
      valueBox.replaceChildren(input(op === '$exists' ? 'Present' : 'Value', initial, p('/query/value')));
    }
  }

  // keep: the stored rule's operator stays offered even where the picker would not offer it ($sd, $noop, another
  // datatype's), so that opening and saving a scenario never rewrites a rule the user did not touch.
  function renderOperators(initialOp, initialValue, keep = false, likeValue = false) {
    const a = current();
    kind = a?.valueKind ?? 'any';
    const datatype = (a?.operators ?? ALL_OPERATORS).filter((o) => !refused().has(o));
    const offered = zkp ? circuitOperators(zkp.circuit(), datatype) : datatype;
    const ops = keep && typeof initialOp === 'string' && initialOp !== '' && !offered.includes(initialOp) ? [...offered, initialOp] : offered;
    const chosen = ops.includes(initialOp) ? initialOp : (likeValue && ops.find((o) => shape(o) === shape(initialOp))) || ops[0];
    opSelect.replaceChildren(...ops.map((o) => option(o, `${o} (${OPERATOR_NAMES[o] ?? o})`, o === chosen)));
    renderValue(initialOp === chosen || (likeValue && shape(initialOp) === shape(chosen)) ? initialValue : undefined);
  }

  function renderAttributes(initialAttr) {
    const list = attributes();
    attrSelect.replaceChildren(option('', 'Choose an attribute'), ...list.map((a) => option(a.path, `${a.path} (${a.datatype})`, a.path === initialAttr)));
    // An attribute the tree does not list (an index path such as docs.0.type, id, type) stays as stored.
    if (typeof initialAttr === 'string' && initialAttr !== '' && !list.some((a) => a.path === initialAttr)) {
      attrSelect.append(option(initialAttr, `${initialAttr} (not in the context's tree)`, true));
    }
    const open = typeSelect.value !== '' && isOpen();
    attrField.hidden = open;
    attrTextField.hidden = !open;
    attrSelect.disabled = open;
    attrText.disabled = !open;
  }

  typeSelect.addEventListener('change', () => { renderAttributes(); renderOperators(); });
  attrSelect.addEventListener('change', () => renderOperators(opSelect.value));
  opSelect.addEventListener('change', () => renderValue());
  renderAttributes(query.attribute);
  renderOperators(query.operator, query.value, true);

  /** A new circuit keeps the operator where it proves it, and the typed value where the operator takes one alike. */
  function onCircuit() {
    const before = opSelect.value;
    const typedValue = value();
    renderOperators(before, typedValue, false, true);
    opNote.textContent = opSelect.value === before ? '' : `This circuit does not prove ${before}: the operator is now ${opSelect.value} (${OPERATOR_NAMES[opSelect.value] ?? opSelect.value}).`;
  }

  const legend = h('legend', {}, `Rule ${index + 1}`);
  const el = h('fieldset', { class: 'rule' }, legend,
    h('div', { class: 'row' }, field('Rule id', idInput, { pointer: p('/id'), className: 'narrow' }), field('Credential type', typeSelect, { pointer: p('/query/type') })),
    h('div', { class: 'row' }, attrField, attrTextField, field('Operator', opSelect, { pointer: p('/query/operator') })),
    valueBox,
    opNote,
    zkp ? zkp.el : '',
    canWrite ? h('button', { type: 'button', class: 'secondary', onclick: onRemove }, `Remove rule ${index + 1}`) : '');

  function value() {
    const op = opSelect.value;
    const texts = valueControls.map((c) => c.value);
    if (VALUELESS.has(op)) return undefined;
    if (op === '$exists') return texts[0] === 'true';
    if (op === '$in' || op === '$nin') return texts[0].split(',').map((t) => t.trim()).filter((t) => t !== '').map((t) => typed(t, kind));
    if (op === '$between' || op === '$nonbetween') return texts.map((t) => typed(t, kind));
    return typed(texts[0] ?? '', kind);
  }

  const read = () => ({
    ...rule,
    id: idInput.value.trim(),
    query: {
      ...query,
      type: typeSelect.value,
      requestId: query.requestId ?? nextRequestId,
      attribute: (isOpen() ? attrText.value.trim() : attrSelect.value) || undefined,
      operator: opSelect.value,
      value: value(),
    },
  });
  return { el, read: () => (zkp ? { ...read(), query: zkp.read(read().query) } : read()) };
}

/** A 202's Location names the proposed revision: linked to it on the revisions page, where it is approved. */
function proposed(id, location, query) {
  const n = /\/revisions\/(\d+)/.exec(location ?? '')?.[1];
  return n === undefined
    ? ['Proposed for approval.']
    : ['Proposed for approval as ', h('a', { href: `#/scenarios/${encodeURIComponent(id)}/revisions/${n}${query}` }, `revision ${n}`), ': it goes live once another reviewer approves it.'];
}

/** Problems placed beside the control whose pointer they name (or its nearest enclosing one); the rest listed. */
function placeProblems(form, summary, problems, prefix) {
  for (const c of form.querySelectorAll('[data-pointer]')) setError(c, '');
  const unplaced = [];
  const messages = new Map();
  for (const e of problems) {
    let pointer = typeof e.pointer === 'string' && e.pointer.startsWith(prefix) ? e.pointer.slice(prefix.length) : null;
    let control = null;
    while (pointer !== null && pointer !== '' && !control) {
      control = [...form.querySelectorAll('[data-pointer]')].find((c) => c.dataset.pointer === pointer && !c.disabled) ?? null;
      if (!control) pointer = pointer.slice(0, pointer.lastIndexOf('/'));
    }
    if (!control) { unplaced.push(e.field ? `${e.field}: ${e.message}` : e.message); continue; }
    messages.set(control, [...(messages.get(control) ?? []), e.message]);
  }
  for (const [control, list] of messages) setError(control, list.join('; '));
  return unplaced;
}

/** The project field of a new scenario: the token's projects to choose from (any name for an operator's token). */
function projectControl(me) {
  const projects = me?.projects;
  if (Array.isArray(projects)) {
    const select = h('select', { required: true }, option('', 'Choose a project'), projects.map((p) => option(p, p)));
    return { el: field('Project', select, { pointer: '/projectId', hint: 'One of this token\'s projects' }), read: () => select.value || undefined };
  }
  const input = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' });
  return {
    el: field('Project', input, { pointer: '/projectId', hint: projects === '*' ? 'Empty: no project (an operator\'s token only)' : 'This token\'s projects are not known: empty for none' }),
    read: () => input.value.trim() || undefined,
  };
}

/** `params`: the route's query; its projectId names the scenario's project (several of the token's may use the id). */
export async function editorView(show, scenarioId, { params } = {}) {
  const typesAnswer = api('GET', '/compliance/credential-types');
  const meAnswer = api('GET', '/compliance/me');
  const projectId = params?.get('projectId') ?? null;
  const query = projectId === null ? '' : `?projectId=${encodeURIComponent(projectId)}`;
  const path = scenarioId === null ? null : `/compliance/scenarios/${encodeURIComponent(scenarioId)}`;
  let existing = null;
  let etag = null;
  if (scenarioId !== null) {
    const r = await api('GET', `${path}${query}`);
    if (!r.ok) return show(`Scenario ${scenarioId}`, h('p', { class: 'alert', role: 'alert' }, problemText(r)));
    existing = r.data;
    etag = r.headers.get('etag');
  }
  const [typesR, meR] = await Promise.all([typesAnswer, meAnswer]);
  const me = meR.ok ? meR.data : null;
  const canWrite = me === null || me.scopes.includes('scenarios:write');
  const canExecute = me === null || me.scopes.includes('scenarios:execute');
  const held = typesR.ok ? typesR.data.items : [];
  const scenarioTypes = new Map((typesR.ok ? typesR.data.scenarioTypes ?? [] : []).map((t) => [t.type, new Set(t.refusedOperators)]));
  let input = existing?.input ?? { name: '', type: 'ChallengeQuery', queryConfigurations: [{ id: 'rule-1', query: {} }], smartContractDeployments: [] };

  const idInput = h('input', { type: 'text', autocomplete: 'off', value: existing?.id ?? '', disabled: existing !== null });
  const nameInput = h('input', { type: 'text', autocomplete: 'off', value: input.name ?? '' });
  const typeSelect = h('select', { disabled: existing !== null }, TYPES.map((t) => option(t, t, t === input.type)));
  const project = existing === null ? projectControl(me) : null;
  let issuers = issuersField(input);
  const issuersBox = h('div', {}, issuers.el);
  const rulesBox = h('div', {});
  const summary = h('div', { class: 'alert', role: 'alert' });
  const saved = h('p', { class: 'status', role: 'status' });
  let rules = [];
  // Whether any rule was edited, added or removed: a PATCH carries queryConfigurations only then.
  let rulesTouched = false;
  rulesBox.addEventListener('input', () => { rulesTouched = true; });
  rulesBox.addEventListener('change', () => { rulesTouched = true; });
  // New rules take an id and requestId no rule had in this editor, even after a removal.
  const seen = { ids: new Set(), requestId: 0 };
  const note = (configs) => configs.forEach((qc) => {
    if (typeof qc.id === 'string') seen.ids.add(qc.id);
    if (Number.isSafeInteger(qc.query?.requestId)) seen.requestId = Math.max(seen.requestId, qc.query.requestId);
  });
  const freshId = () => {
    let n = 1;
    while (seen.ids.has(`rule-${n}`)) n += 1;
    seen.ids.add(`rule-${n}`);
    return `rule-${n}`;
  };

  const renderRules = (configs) => {
    note(configs);
    rules = configs.map((qc, i) => ruleEditor(held, qc, i, () => {
      rulesTouched = true;
      renderRules(rules.map((r) => r.read()).filter((_, j) => j !== i));
    }, qc.query?.requestId ?? (seen.requestId += 1), () => scenarioTypes.get(typeSelect.value) ?? new Set(), typeSelect.value, canWrite));
    rulesBox.replaceChildren(...rules.map((r) => r.el));
  };
  renderRules(input.queryConfigurations ?? []);
  // The scenario type decides which operators its rules may use, and which options they have.
  typeSelect.addEventListener('change', () => renderRules(rules.map((r) => r.read())));

  const draft = () => {
    const d = { ...input, name: nameInput.value.trim(), type: typeSelect.value, queryConfigurations: rules.map((r) => r.read()), trustedIssuers: issuers.read() };
    if (project) d.projectId = project.read();
    for (const k of ['trustedIssuers', 'projectId']) if (d[k] === undefined || (d[k] === null && existing === null)) delete d[k];
    return d;
  };
  const dirty = () => rulesTouched || issuers.changed() || nameInput.value.trim() !== (input.name ?? '');
  // Always the project (empty: none): an operator's token may hold the id in several projects and without one.
  const scenarioUrl = (id, p) => `#/scenarios/${encodeURIComponent(id)}?projectId=${encodeURIComponent(p ?? '')}`;

  const form = h('form', {
    novalidate: true,
    onsubmit: async (e) => {
      e.preventDefault();
      saved.textContent = 'Saving…';
      const scenario = draft();
      const r = existing === null
        ? await api('POST', '/compliance/scenarios', { body: { id: idInput.value.trim(), input: scenario } })
        : await api('PATCH', `${path}${query}`, {
          body: { input: { name: scenario.name, ...(rulesTouched && { queryConfigurations: scenario.queryConfigurations }), ...(issuers.changed() && { trustedIssuers: scenario.trustedIssuers ?? null }) } },
          headers: etag ? { 'if-match': etag } : {},
        });
      const unplaced = placeProblems(form, summary, r.ok ? [] : (r.data?.errors ?? []).map((x) => ({ ...x, pointer: x.pointer === '/id' ? '/input/id' : x.pointer })), '/input');
      if (!r.ok) {
        saved.textContent = '';
        const stale = r.status === 412 ? h('p', {}, 'The scenario changed meanwhile (a deployment, or another user): reload the page to edit its latest revision (your edits here are not kept).') : '';
        summary.replaceChildren(h('p', {}, problemText(r)), stale, unplaced.length ? h('ul', {}, unplaced.map((m) => h('li', {}, m))) : '');
        return;
      }
      summary.replaceChildren();
      if (r.status === 202) { saved.replaceChildren(...proposed(existing.id, r.headers.get('location'), query)); return; }
      etag = r.headers.get('etag');
      rulesTouched = false;
      saved.textContent = existing === null ? `Created ${idInput.value.trim()}` : 'Saved';
      if (existing === null) { location.hash = scenarioUrl(idInput.value.trim(), scenario.projectId); return; }
      input = { ...input, ...r.data.input };
      issuers = issuersField(input);
      issuersBox.replaceChildren(issuers.el);
    },
  },
  h('div', { class: 'row' },
    field('Scenario id', idInput, { pointer: '/id' }), field('Name', nameInput, { pointer: '/name' }), field('Type', typeSelect, { pointer: '/type' })),
  project ? h('div', { class: 'row' }, project.el) : existing?.input.projectId ? h('p', { class: 'hint' }, `Project: ${existing.input.projectId}`) : '',
  issuersBox,
  h('h2', {}, 'Rules'),
  held.length === 0 ? h('p', { class: 'hint' }, typesR.ok ? 'The service holds no credential type\'s context: attributes are typed by hand.' : `Credential types unavailable: ${problemText(typesR)}`) : '',
  rulesBox,
  canWrite
    ? h('div', { class: 'actions' },
      h('button', {
        type: 'button', class: 'secondary', onclick: () => {
          rulesTouched = true;
          renderRules([...rules.map((r) => r.read()), { id: freshId(), query: {} }]);
        },
      }, 'Add a rule'),
      h('button', { type: 'submit' }, existing === null ? 'Create scenario' : 'Save changes'))
    : h('p', { class: 'hint' }, 'This token may not change scenarios (scenarios:write): the rules are shown, not saved.'),
  summary, saved);

  // A deploy changes the scenario (its deployments, the rules' requestIds): the editor takes the new revision's ETag and
  // rules, unless its rules were edited: then it keeps the old ETag, so that a save is refused (412) instead of putting
  // the old requestIds back over the deployment's.
  const reload = async () => {
    const r = await api('GET', `${path}${query}`);
    if (!r.ok) return null;
    if (rulesTouched) return r.data;
    etag = r.headers.get('etag');
    input = r.data.input;
    renderRules(input.queryConfigurations ?? []);
    return r.data;
  };
  const onChain = existing !== null && existing.input.type === 'OnChainZKP'
    ? deploymentsPanel({ record: existing, path, query, canWrite, dirty, reload })
    : '';
  const wallet = existing !== null && existing.input.type === 'OffChainZKP' ? { path: `/compliance/scenarios/execute${query}`, scenarioId: existing.id } : null;

  show(existing === null ? 'New scenario' : `Scenario ${existing.id}`,
    h('div', { class: 'columns' }, h('section', { 'aria-label': 'Editor' }, form, onChain), tryPanel(draft, form, summary, wallet, { canWrite, canExecute })));
}

/** The dry run of the editor's unsaved content. The pasted credentials stay in this panel's field and go only to the dry-run route. */
function tryPanel(draft, form, summary, wallet, { canWrite, canExecute }) {
  const credentials = h('textarea', { rows: 10, autocomplete: 'off', spellcheck: 'false' });
  const address = h('input', { type: 'text', autocomplete: 'off', spellcheck: 'false' });
  const out = h('div', { 'aria-live': 'polite' });
  const panel = h('section', { class: 'panel', 'aria-labelledby': 'try-heading' },
    h('h2', { id: 'try-heading' }, 'Try it'),
    h('p', { class: 'hint' }, 'Runs the editor\'s content as it is now, unsaved, against credentials you paste. Nothing is recorded or kept.'),
    field('Credentials (a JSON array)', credentials, { pointer: '/credentials' }),
    field('Holder address', address, { pointer: '/address' }),
    h('div', { class: 'actions' }, canWrite ? h('button', { type: 'button', onclick: run }, 'Dry-run') : '',
      wallet && canExecute ? h('button', { type: 'button', class: 'secondary', onclick: ask }, 'Ask a wallet') : ''),
    canWrite ? '' : h('p', { class: 'hint' }, 'No dry run: the API runs one for a token with scenarios:write only.'),
    wallet && !canExecute ? h('p', { class: 'hint' }, 'No Ask a wallet: it executes the scenario, which needs scenarios:execute.') : '',
    wallet && canExecute ? h('p', { class: 'hint' }, 'Ask a wallet: executes the saved scenario for the address and shows the authorization request a wallet answers (recorded as an execution, pending until it does).') : '',
    out);

  /** OffChainZKP: a real execution, whose request a wallet can answer (a dry run's answer gets 404). */
  async function ask() {
    out.replaceChildren(h('p', { class: 'status' }, 'Executing…'));
    const r = await api('POST', wallet.path, { body: { scenarioId: wallet.scenarioId, address: address.value.trim(), credentials: [] } });
    if (!r.ok) {
      const problems = (r.data?.errors ?? []).map((e) => `${e.field}: ${e.message}`);
      out.replaceChildren(h('div', { class: 'alert', role: 'alert' }, h('p', {}, problemText(r)), problems.length ? h('ul', {}, problems.map((m) => h('li', {}, m))) : ''));
      return;
    }
    const first = r.data[0];
    const request = first?.result?.authorizationRequest;
    out.replaceChildren(request
      ? requestView(request, `Execution ${first.executionId}: pending until the wallet answers (see Decisions).`)
      : h('p', {}, `Execution ${first?.executionId ?? ''}: ${first?.result?.status ?? 'no result'}`));
  }

  async function run() {
    setError(credentials, '');
    let list;
    try {
      list = JSON.parse(credentials.value);
      if (!Array.isArray(list)) list = [list];
    } catch {
      setError(credentials, 'Not JSON: paste the credentials as a JSON array');
      return;
    }
    out.replaceChildren(h('p', { class: 'status' }, 'Running…'));
    const r = await api('POST', '/compliance/scenarios/dry-run', { body: { scenario: draft(), address: address.value.trim(), credentials: list } });
    const problems = r.ok ? [] : (r.data?.errors ?? []);
    const unplaced = placeProblems(panel, summary, problems.filter((e) => !String(e.pointer ?? '').startsWith('/scenario')), '');
    const inForm = placeProblems(form, summary, problems.filter((e) => String(e.pointer ?? '').startsWith('/scenario')), '/scenario');
    if (!r.ok) {
      out.replaceChildren(h('div', { class: 'alert', role: 'alert' }, h('p', {}, problemText(r)), [...unplaced, ...inForm].length ? h('ul', {}, [...unplaced, ...inForm].map((m) => h('li', {}, m))) : ''));
      return;
    }
    out.replaceChildren(results(r.data));
  }
  return panel;
}

function results({ verdict, results: list, trace }) {
  const passed = verdict === 'passed';
  // OffChainZKP: one request for every rule of the run.
  const request = list.map((r) => r.result?.authorizationRequest).find((x) => x !== undefined);
  return h('div', {},
    h('h3', {}, 'Verdict: ', h('span', { class: `badge ${passed ? 'valid' : verdict === 'pending' ? '' : 'not-valid'}` }, String(verdict))),
    request ? requestView(request, 'A dry run keeps no pending execution: a wallet can read this request, but its answer gets 404 (use Ask a wallet on a saved scenario).') : '',
    list.map((res, i) => {
      const t = trace[i] ?? { credentials: [] };
      const status = res.result?.status ?? t.status;
      const reasons = res.result?.result?.reasons ?? [];
      const id = uid('rule');
      return h('article', { class: `result ${status}`, 'aria-labelledby': id },
        h('h3', { id }, `Rule ${res.objectId}: `, h('span', { class: `badge ${status}` }, status)),
        reasons.length ? h('ul', { class: 'reasons' }, reasons.map((x) => h('li', {}, x))) : '',
        t.decidingCheck ? h('p', {}, 'Decided by the check ', h('code', {}, t.decidingCheck.check), t.decidingCheck.credential === undefined ? '' : ` of credential #${t.decidingCheck.credential + 1}`) : '',
        t.credentials.map((c) => h('div', {},
          h('p', {}, `Credential #${c.index + 1}${c.decidingCheck ? `, stopped at ${c.decidingCheck}` : ', passed every check'}`),
          h('ul', { class: 'checks' }, c.checks.map((k) => h('li', { class: k.outcome === 'fail' ? 'fail' : undefined },
            h('code', {}, k.check), ` ${k.outcome}`, k.reason ? `: ${k.reason}` : ''))))));
    }));
}
