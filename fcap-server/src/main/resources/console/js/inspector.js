// The recipient inspector: GET /v1/recipients/{recipient} shows each counter (per rule, and per
// content fingerprint for content rules) with usage, remaining and when it frees up, the policy's
// send windows (open or shut in the recipient's zone, and when each next opens), plus the
// recipient's recent denials; DELETE resets it, after a confirmation.

import { api, ApiError } from './api.js';
import { $, el, clear, duration, time, zonedTime, usageBar, clearFieldErrors, showFieldErrors, confirmDialog }
  from './ui.js';

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
    r = await api.inspect(ctx.tenant(), recipient, $('inspect-timeZone').value.trim());
  } catch (e) {
    if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 401) {
      const field = e.field === 'timeZone' ? 'timeZone' : 'recipient';
      showFieldErrors('inspect-', [{ field, message: e.message }]);
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
  renderWindows(r);
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

function renderWindows(r) {
  const windows = r.windows || [];
  $('inspect-windows-meta').textContent = `in the recipient's zone ${r.timeZone}`;
  const body = clear($('inspect-windows').tBodies[0]);
  for (const w of windows) {
    body.append(el('tr', { 'data-rule': w.rule },
      el('td', {}, el('span', { class: 'rule-id' }, w.rule), ' ',
        w.enforced ? null : el('span', { class: 'badge shadow' }, 'shadow')),
      el('td', {}, appliesTo(w)),
      el('td', { class: 'mono zone' }, w.zone),
      el('td', { class: 'state' }, el('span', { class: 'badge ' + (w.open ? 'allowed' : 'denied') },
        w.open ? 'open' : 'shut')),
      el('td', { class: 'opens' }, opening(w, r.time))));
  }
  $('inspect-windows-wrap').hidden = windows.length === 0;
  $('windows-empty').hidden = windows.length > 0;
}

function appliesTo(w) {
  const parts = [];
  for (const [label, cond] of [['match', w.match], ['exempt', w.exempt]]) {
    for (const [dim, values] of Object.entries(cond || {})) {
      parts.push(`${label} ${dim} ∈ {${values.join(', ')}}`);
    }
  }
  return parts.length ? parts.join('; ') : 'all messages';
}

/** The next opening of a shut window, as the window's own zone reads it, and in UTC. */
function opening(w, now) {
  if (w.open) {
    return 'now';
  }
  if (w.opensAt < 0) {
    return 'never';
  }
  return el('span', {}, `${zonedTime(w.opensAt, w.zone)} ${w.zone}`, el('span', { class: 'desc' },
    `in ${duration(w.opensAt - now)} · ${zonedTime(w.opensAt, 'UTC')} UTC`));
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
