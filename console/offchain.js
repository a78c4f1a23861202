// OffChainZKP in the editor: each rule's circuit options, the scenario's allowed issuers, and an authorization request
// shown as a QR code (the QR library is loaded only when a request is shown).
import { field, h, option } from './dom.js';

export const CIRCUITS = ['credentialAtomicQuerySigV2', 'credentialAtomicQueryMTPV2', 'credentialAtomicQueryV3', 'linkedMultiQuery'];
const V2_OPERATORS = ['$noop', '$eq', '$ne', '$lt', '$gt', '$in', '$nin', '$sd'];
const PROOF_TYPES = ['BJJSignature2021', 'Iden3SparseMerkleTreeProof'];

/**
 * The operators a circuit proves (docs/offchain-walkthrough.md, "iden3's spellings"): V2 the eight of V2, linkedMultiQuery
 * V3's but $noop and $sd; V3 and the service's default all. `datatype`: the attribute's own, to which $noop and $sd add.
 */
export function circuitOperators(circuitId, datatype) {
  if (circuitId === 'credentialAtomicQuerySigV2' || circuitId === 'credentialAtomicQueryMTPV2') return ['$noop', ...datatype, '$sd'].filter((o) => V2_OPERATORS.includes(o));
  if (circuitId === 'linkedMultiQuery') return datatype;
  return ['$noop', ...datatype, '$sd'];
}

/** A rule's OffChainZKP options: request id, circuit, proof type, group, nullifier session, context. */
export function circuitOptions(query, index, onCircuit) {
  const p = (suffix) => `/queryConfigurations/${index}/query${suffix}`;
  const requestId = h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', value: query.requestId === undefined ? '' : String(query.requestId) });
  const circuit = h('select', {}, option('', 'The service\'s choice (V3 where the rule needs it)'), CIRCUITS.map((c) => option(c, c, c === query.circuitId)));
  const proofType = h('select', {}, option('', 'Either'), PROOF_TYPES.map((t) => option(t, t, t === query.proofType)));
  const groupId = h('input', { type: 'number', min: 1, step: 1, autocomplete: 'off', value: query.groupId === undefined ? '' : String(query.groupId) });
  const nullifier = h('input', { type: 'text', inputmode: 'numeric', autocomplete: 'off', value: query.params?.nullifierSessionId === undefined ? '' : String(query.params.nullifierSessionId) });
  const context = h('input', { type: 'url', autocomplete: 'off', spellcheck: 'false', value: query.context ?? '' });
  const v3Only = [proofType, groupId, nullifier];
  // Until the circuit is changed, a field it disables keeps the stored value (a save never drops what was not touched).
  let circuitChanged = false;
  const sync = () => {
    // proofType, groupId and the nullifier are V3's (proofType and groupId linkedMultiQuery's too, as the API accepts).
    const c = circuit.value;
    const v2 = c === 'credentialAtomicQuerySigV2' || c === 'credentialAtomicQueryMTPV2';
    for (const control of v3Only) control.disabled = v2 || (c === 'linkedMultiQuery' && control === nullifier);
  };
  circuit.addEventListener('change', () => { circuitChanged = true; sync(); onCircuit(); });
  sync();
  const el = h('fieldset', { class: 'zkp' }, h('legend', {}, 'Proof request'),
    h('div', { class: 'row' },
      field('Request id', requestId, { pointer: p('/requestId'), className: 'narrow', hint: 'From 1 to 4294967295' }),
      field('Circuit', circuit, { pointer: p('/circuitId') }),
      field('Proof type', proofType, { pointer: p('/proofType'), hint: 'credentialAtomicQueryV3 and linkedMultiQuery' })),
    h('div', { class: 'row' },
      field('Group id', groupId, { pointer: p('/groupId'), className: 'narrow', hint: 'Rules of one group are proved on one credential' }),
      field('Nullifier session id', nullifier, { pointer: p('/params/nullifierSessionId'), hint: 'Asks a nullifier: one holder, one address (V3)' })),
    field('JSON-LD context URL', context, { pointer: p('/context'), hint: 'Empty: ZKP_CONTEXTS maps the type' }));

  const number = (text) => (/^\d{1,15}$/.test(text) ? Number(text) : text);
  return {
    el,
    circuit: () => circuit.value,
    /** The options over `q`; an emptied one is left out. */
    read: (q) => {
      const n = nullifier.value.trim();
      const kept = (stored) => (circuitChanged ? undefined : stored);
      const out = {
        ...q,
        requestId: requestId.value.trim() === '' ? undefined : number(requestId.value.trim()),
        circuitId: circuit.value || undefined,
        proofType: proofType.disabled ? kept(query.proofType) : proofType.value || undefined,
        groupId: groupId.disabled ? kept(query.groupId) : groupId.value.trim() === '' ? undefined : number(groupId.value.trim()),
        context: context.value.trim() || undefined,
        params: nullifier.disabled ? kept(q.params) : n === '' ? undefined : { ...q.params, nullifierSessionId: number(n) },
      };
      for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
      return out;
    },
  };
}

/** The scenario's allowed issuers (`trustedIssuers`), one DID a line. */
export function issuersField(input) {
  const area = h('textarea', { rows: 2, autocomplete: 'off', spellcheck: 'false' }, (input.trustedIssuers ?? []).join('\n'));
  const el = field('Allowed issuers', area, { pointer: '/trustedIssuers', hint: 'One DID a line, or * for any; empty: the service\'s TRUSTED_ISSUERS alone' });
  const read = () => {
    const list = area.value.split('\n').map((l) => l.trim()).filter((l) => l !== '');
    return list.length === 0 ? (input.trustedIssuers === undefined ? undefined : null) : list;
  };
  return { el, read, changed: () => JSON.stringify(read() ?? null) !== JSON.stringify(input.trustedIssuers ?? null) };
}

/** The deep link a wallet opens: `iden3comm://?i_m=` and the request's JSON in base64 (docs/offchain-walkthrough.md). */
export function deepLink(request) {
  const bytes = new TextEncoder().encode(JSON.stringify(request));
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return `iden3comm://?i_m=${encodeURIComponent(btoa(binary))}`;
}

const MODULE_PX = 4;
/** The most a QR code holds (version 40, low error correction, bytes). */
export const QR_MAX_BYTES = 2953;

/** The QR code of `text` on a canvas, its modules drawn one by one (no markup, no inline style). */
function qrCanvas(encodeQR, text, label) {
  const grid = encodeQR(text, 'raw', { ecc: 'low', border: 4 });
  const canvas = h('canvas', { class: 'qr', width: grid.length * MODULE_PX, height: grid.length * MODULE_PX, role: 'img', 'aria-label': label });
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#fff';
  ctx.fillRect(0, 0, canvas.width, canvas.height);
  ctx.fillStyle = '#000';
  grid.forEach((row, y) => row.forEach((dark, x) => { if (dark) ctx.fillRect(x * MODULE_PX, y * MODULE_PX, MODULE_PX, MODULE_PX); }));
  return canvas;
}

/** An authorization request as a QR code, its deep link beside it and its JSON; `note` says where it came from. */
export function requestView(request, note) {
  const link = deepLink(request);
  const qr = h('div', { class: 'qr-box' }, h('p', { class: 'status' }, 'Drawing the QR code…'));
  const size = new TextEncoder().encode(link).length;
  if (size > QR_MAX_BYTES) {
    qr.replaceChildren(h('p', { class: 'rev-warning' }, `This request is too large for a QR code (its link is ${size} bytes, a QR code holds at most ${QR_MAX_BYTES}): open the link below on the wallet's device, or send it the JSON.`));
  } else {
    import('/console/vendor/qr.js').then(
      (lib) => {
        try { qr.replaceChildren(qrCanvas(lib.default, link, 'QR code of the authorization request (its link is below)')); } catch (err) {
          qr.replaceChildren(h('p', { class: 'alert', role: 'alert' }, `No QR code: ${err?.message ?? err} (open the link below instead)`));
        }
      },
      () => qr.replaceChildren(h('p', { class: 'alert', role: 'alert' }, 'The QR code library could not be loaded (reload the page to try again): open the link below instead.')));
  }
  return h('section', { class: 'auth-request', 'aria-label': 'Authorization request' },
    h('h3', {}, 'Authorization request for the wallet'),
    note ? h('p', { class: 'hint' }, note) : '',
    qr,
    h('p', {}, h('a', { href: link }, 'Open in a wallet on this device')),
    field('Deep link', h('textarea', { rows: 3, readonly: true, spellcheck: 'false' }, link)),
    h('details', {}, h('summary', {}, 'The request (JSON)'), h('pre', { class: 'json', tabindex: '0', role: 'region', 'aria-label': 'The request as JSON' }, JSON.stringify(request, null, 2))));
}
