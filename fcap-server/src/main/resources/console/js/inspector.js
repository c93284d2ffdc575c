// The recipient inspector: GET /v1/recipients/{recipient} shows each counter (per rule, and per
// content fingerprint for content rules) with usage, remaining and when it frees up, plus the
// recipient's recent denials; DELETE resets it, after a confirmation.

import { api, ApiError } from './api.js';
import { $, el, clear, duration, time, usageBar, clearFieldErrors, showFieldErrors, confirmDialog } from './ui.js';

let ctx;
let current = null; // the recipient shown

export function init(context) {
  ctx = context;
  $('inspect-form').addEventListener('submit', (e) => {
    e.preventDefault();
    inspect($('inspect-recipient').value.trim());
  });
  $('inspect-refresh').addEventListener('click', () => inspect(current));
  $('inspect-reset').addEventListener('click', () => reset());
}

export async function show() {
  if (current) {
    await inspect(current);
  }
}

function message(text, bad = false) {
  const m = $('inspect-message');
  m.textContent = text;
  m.classList.toggle('bad', bad);
}

async function inspect(recipient) {
  const form = $('inspect-form');
  clearFieldErrors(form);
  if (!recipient) {
    showFieldErrors('inspect-', [{ field: 'recipient', message: 'Type a recipient to inspect.' }]);
    return;
  }
  let r;
  try {
    r = await api.inspect(ctx.tenant(), recipient);
  } catch (e) {
    if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 401) {
      showFieldErrors('inspect-', [{ field: 'recipient', message: e.message }]);
    }
    return;
  }
  if (current !== recipient) {
    message('');
  }
  current = recipient;
  render(r);
}

function render(r) {
  $('inspect-result').hidden = false;
  $('inspect-heading').textContent = `Recipient ${r.recipient}`;
  $('inspect-meta').textContent = `tenant ${r.tenant} · policy version ${r.policyVersion} · as of ${time(r.time)}`
    + (r.degraded ? ' · degraded: the store is down, these are the outage counters' : '');
  const body = clear($('inspect-counters').tBodies[0]);
  for (const c of r.counters) {
    body.append(el('tr', { 'data-rule': c.rule },
      el('td', {}, el('span', { class: 'rule-id' }, c.rule), ' ',
        c.enforced ? null : el('span', { class: 'badge shadow' }, 'shadow'),
        el('span', { class: 'desc' }, `${c.limit} per ${duration(c.windowMs)}`)),
      el('td', { class: 'mono' }, counterName(c.values)),
      el('td', { class: 'usage' }, usageBar(c.used, c.limit)),
      el('td', { class: 'num remaining' }, String(c.remaining)),
      el('td', { class: 'frees' }, frees(c.freesInMs, r.time))));
  }
  $('inspect-empty').hidden = r.counters.length > 0;
  const denials = clear($('inspect-denials').tBodies[0]);
  for (const d of r.recentDenials) {
    denials.append(el('tr', {},
      el('td', {}, time(d.time)),
      el('td', {}, d.blockedBy.join(', ')),
      el('td', {}, [d.channel, d.category].filter(Boolean).join(' / ') || '-'),
      el('td', { class: 'mono' }, d.decisionId)));
  }
  $('denials-empty').hidden = r.recentDenials.length > 0;
}

function counterName(values) {
  const parts = Object.entries(values || {}).map(([k, v]) => `${k} ${k === 'content' ? v.slice(0, 12) + '…' : v}`);
  return parts.length ? parts.join(', ') : 'recipient';
}

function frees(ms, now) {
  if (ms === 0) {
    return el('span', { class: 'badge allowed' }, 'free now');
  }
  if (ms < 0) {
    return el('span', { class: 'badge denied' }, 'never (over the limit for good)');
  }
  return el('span', {}, el('span', { class: 'badge denied' }, 'in ' + duration(ms)), ' at ', time(now + ms));
}

async function reset() {
  const recipient = current;
  const ok = await confirmDialog(`Reset ${recipient}?`, `All counters of ${recipient} in tenant ${ctx.tenant()} `
    + 'are forgotten: the next messages are counted from zero. This cannot be undone.', 'Reset recipient');
  if (!ok) {
    $('inspect-reset').focus();
    return;
  }
  try {
    const r = await api.reset(ctx.tenant(), recipient);
    await inspect(recipient);
    message(r.reset ? `${recipient} was reset: every counter starts from zero.` : `${recipient} had no counters.`);
  } catch (e) {
    message(`Cannot reset ${recipient}: ${e.message}`, true);
  }
  $('inspect-reset').focus();
}
