// Small DOM helpers. Text from the server always goes in through textContent, never as HTML.

export const $ = (id) => document.getElementById(id);

/** el('td', {class: 'num'}, 'text', childNode, ...) */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) {
      continue;
    }
    if (k === 'class') {
      node.className = v;
    } else if (k === 'onclick') {
      node.addEventListener('click', v);
    } else {
      node.setAttribute(k, v === true ? '' : v);
    }
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null && c !== false) {
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
  }
  return node;
}

export function clear(node) {
  node.replaceChildren();
  return node;
}

/** "1d 2h", "59s", "1m 30s", "250 ms" */
export function duration(ms) {
  if (ms === null || ms === undefined) {
    return '';
  }
  if (ms < 1000) {
    return Math.round(ms) + ' ms';
  }
  let s = Math.round(ms / 1000);
  const parts = [];
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]]) {
    if (s >= size) {
      parts.push(Math.floor(s / size) + unit);
      s %= size;
    }
    if (parts.length === 2) {
      break;
    }
  }
  return parts.join(' ');
}

export function time(ms) {
  const d = new Date(ms);
  const today = new Date();
  const sameDay = d.toDateString() === today.toDateString();
  return sameDay ? d.toLocaleTimeString() : d.toLocaleString();
}

/**
 * An instant as the wall clock of `zone` (an IANA id) reads it, e.g. "Mon 2026-03-09 08:00:00": the
 * same form in every browser and locale, so a reader can compare it with the zone's own clocks.
 */
export function zonedTime(ms, zone) {
  const parts = {};
  const format = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', year: 'numeric',
    month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
  for (const p of format.formatToParts(new Date(ms))) {
    parts[p.type] = p.value;
  }
  return `${parts.weekday} ${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second}`;
}

export function rate(x) {
  if (x === null || x === undefined || Number.isNaN(x)) {
    return '-';
  }
  return x >= 100 ? Math.round(x).toLocaleString() : x >= 10 ? x.toFixed(1) : x.toFixed(2);
}

export function percent(x) {
  return x === null || x === undefined || Number.isNaN(x) ? '-' : (x * 100).toFixed(1) + ' %';
}

/** A usage bar: used of limit, with the numbers as text. */
export function usageBar(used, limit) {
  const share = limit > 0 ? Math.min(1, used / limit) : 0;
  const fill = el('div', { class: 'fill' + (share >= 1 ? ' full' : share >= 0.8 ? ' high' : '') });
  fill.style.width = (share * 100).toFixed(1) + '%';
  return el('div', { class: 'bar' },
    el('div', { class: 'track', 'aria-hidden': 'true' }, fill),
    el('span', {}, `${used} / ${limit}`));
}

/**
 * Field errors of a form: `prefix` + field name is the input id, `prefix` + field + "-error" the
 * message next to it. Returns the errors that matched no field.
 */
export function showFieldErrors(prefix, fieldErrors) {
  const unplaced = [];
  let first = null;
  for (const { field, message } of fieldErrors) {
    const name = (field || '').split('.')[0];
    const input = name ? $(prefix + name) : null;
    const slot = name ? $(prefix + name + '-error') : null;
    if (!input || !slot) {
      unplaced.push(field ? `${field}: ${message}` : message);
      continue;
    }
    slot.textContent = slot.textContent ? slot.textContent + ' ' + message : message;
    input.setAttribute('aria-invalid', 'true');
    first = first || input;
  }
  if (first) {
    first.focus();
  }
  return unplaced;
}

export function clearFieldErrors(form) {
  for (const slot of form.querySelectorAll('.field-error, .form-error')) {
    slot.textContent = '';
  }
  for (const input of form.querySelectorAll('[aria-invalid]')) {
    input.removeAttribute('aria-invalid');
  }
}

/** A confirmation in a modal dialog; resolves true when confirmed. */
export function confirmDialog(title, text, confirmLabel) {
  const dialog = $('confirm-dialog');
  $('confirm-title').textContent = title;
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = confirmLabel;
  dialog.returnValue = '';
  return new Promise((resolve) => {
    dialog.addEventListener('close', () => resolve(dialog.returnValue === 'ok'), { once: true });
    dialog.showModal();
    $('confirm-cancel').focus();
  });
}
