// Elements are built with properties and text nodes only: nothing the API answers is ever parsed as HTML.
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k in el && k !== 'list' && typeof v !== 'string') el[k] = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== undefined && c !== null && c !== false) el.append(c instanceof Node ? c : String(c));
  return el;
}

let ids = 0;
export const uid = (prefix) => `${prefix}-${++ids}`;

/** A labelled control with a slot for its error message, named by aria-describedby. */
export function field(label, control, { hint, pointer, className } = {}) {
  control.id ||= uid('f');
  const error = h('p', { class: 'error', id: `${control.id}-error`, hidden: true });
  const described = [error.id];
  let hintEl;
  if (hint) {
    hintEl = h('p', { class: 'hint', id: `${control.id}-hint` }, hint);
    described.unshift(hintEl.id);
  }
  control.setAttribute('aria-describedby', described.join(' '));
  if (pointer) control.dataset.pointer = pointer;
  return h('div', { class: `field${className ? ` ${className}` : ''}` }, h('label', { for: control.id }, label), control, hintEl, error);
}

/** Sets (or clears, with '') the message beside a control made by field(). */
export function setError(control, message) {
  const error = document.getElementById(`${control.id}-error`);
  if (!error) return false;
  error.textContent = message;
  error.hidden = message === '';
  if (message === '') control.removeAttribute('aria-invalid');
  else control.setAttribute('aria-invalid', 'true');
  return true;
}

export function option(value, label = value, selected = false) {
  return h('option', { value, selected }, label);
}
