// Try it: builds a message from the form, sends it to POST /v1/decisions (a dry run unless the box
// is unticked) and shows the whole decision. Bad input is refused by the server with the field named;
// the error appears next to that field.

import { api, ApiError } from './api.js';
import { $, el, clear, duration, usageBar, zonedTime, clearFieldErrors, showFieldErrors } from './ui.js';

let ctx;
const TEXT_FIELDS = ['recipient', 'channel', 'sender', 'category', 'content', 'contentKey', 'timeZone', 'priority'];

export function init(context) {
  ctx = context;
  $('try-form').addEventListener('submit', (e) => {
    e.preventDefault();
    send();
  });
}

export async function show() {}

function messageFromForm(errors) {
  const m = { tenant: ctx.tenant() };
  for (const f of TEXT_FIELDS) {
    const v = $('try-' + f).value;
    if (v.trim()) {
      m[f] = f === 'content' ? v : v.trim();
    }
  }
  const cost = $('try-cost').value.trim();
  if (cost) {
    m.cost = /^-?\d+$/.test(cost) ? Number(cost) : cost;
  }
  const attributes = {};
  for (const line of $('try-attributes').value.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const eq = line.indexOf('=');
    if (eq <= 0) {
      errors.push({ field: 'attributes', message: `"${line}": write one name=value per line` });
    } else {
      attributes[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
    }
  }
  if (Object.keys(attributes).length) {
    m.attributes = attributes;
  }
  if ($('try-dryrun').checked) {
    m.dryRun = true;
  }
  return m;
}

async function send() {
  const form = $('try-form');
  clearFieldErrors(form);
  const errors = [];
  const m = messageFromForm(errors);
  if (errors.length) {
    $('try-error').textContent = showFieldErrors('try-', errors).join(' ');
    return;
  }
  $('try-result').hidden = true;
  $('try-json').textContent = '';
  let d;
  try {
    d = await api.decide(m);
  } catch (e) {
    if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 401) {
      const field = e.field === 'tenant' ? null : e.field;
      $('try-error').textContent = showFieldErrors('try-', [{ field, message: e.message }]).join(' ');
    }
    return;
  }
  render(d, m.dryRun === true, m.timeZone || 'UTC');
}

/** When a refused message may go: in the recipient's zone (the message's, else UTC) and in UTC. */
function sendAt(d, zone) {
  const p = $('try-sendat');
  p.hidden = d.allowed || d.sendAt === undefined;
  if (p.hidden) {
    p.textContent = '';
  } else if (d.sendAt < 0) {
    p.textContent = 'Send at: never (a rule will never admit this message)';
  } else {
    p.textContent = `Send at: ${zonedTime(d.sendAt, zone)} ${zone} (recipient's time) · `
      + `${zonedTime(d.sendAt, 'UTC')} UTC`;
  }
}

function render(d, dryRun, zone) {
  $('try-result').hidden = false;
  const verdict = $('try-verdict');
  verdict.className = 'verdict ' + (d.allowed ? 'allowed' : 'denied');
  verdict.textContent = (d.allowed ? 'Allowed' : 'Denied') + (dryRun ? ' (dry run: nothing counted)' : '');
  const parts = [`decision ${d.decisionId}`, `policy version ${d.policyVersion}`];
  if (d.blockedBy.length) {
    parts.push(`blocked by ${d.blockedBy.join(', ')}`);
  }
  if (d.shadowBlockedBy.length) {
    parts.push(`shadow rules that would block: ${d.shadowBlockedBy.join(', ')}`);
  }
  if (d.retryAfterMs > 0) {
    parts.push(`retry after ${duration(d.retryAfterMs)}`);
  }
  if (d.degraded) {
    parts.push('degraded: decided by the failure policy');
  }
  $('try-summary').textContent = parts.join(' · ');
  sendAt(d, zone);
  const body = clear($('try-rules').tBodies[0]);
  for (const r of d.rules) {
    const outcome = r.allowed ? 'allowed' : r.enforced ? 'blocks' : 'would block (shadow)';
    body.append(el('tr', { 'data-rule': r.id },
      el('td', {}, el('span', { class: 'rule-id' }, r.id), el('span', { class: 'desc' },
        `${r.limit} per ${duration(r.windowMs)}` + (r.bound !== undefined ? ` (this priority: up to ${r.bound})` : ''))),
      el('td', {}, el('span', { class: 'badge ' + (r.allowed ? 'allowed' : r.enforced ? 'denied' : 'shadow') }, outcome)),
      el('td', {}, usageBar(r.used, r.limit)),
      el('td', { class: 'num' }, String(r.remaining)),
      el('td', {}, r.retryAfterMs > 0 ? duration(r.retryAfterMs) : '-')));
  }
  if (!d.rules.length) {
    body.append(el('tr', {}, el('td', { colspan: 5, class: 'empty' }, 'No rule applies to this message.')));
  }
  $('try-json').textContent = JSON.stringify(d, null, 2);
}
