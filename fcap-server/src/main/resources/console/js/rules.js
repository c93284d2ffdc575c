// The rules view: the tenant's policy as a table, the editor, shadow/enforce switch, delete, history,
// and the policy's time zone (the zone of recipients whose messages carry none).
//
// The editor writes both kinds of rule: a cap (limit per window) and a send window (when messages
// may go, by the wall clock of the recipient's zone or a fixed one), each with its own fields.
//
// Every change is first sent to POST /v1/rules/validate as the whole candidate policy (the current
// rules with this change), so the server's own checks decide; errors land next to their field. Only
// a valid change is applied, with If-Match on the version it was made against, so a concurrent edit
// by someone else is refused (412) rather than silently overwritten.

import { api, ApiError } from './api.js';
import { $, el, clear, time, clearFieldErrors, showFieldErrors, confirmDialog } from './ui.js';

let ctx;
let policy = { tenant: 'default', version: 0, rules: [] };
let editing = null; // the rule being edited, null when adding

export function init(context) {
  ctx = context;
  $('add-rule').addEventListener('click', () => openEditor(null));
  $('reload-rules').addEventListener('click', () => show());
  $('rule-form').addEventListener('submit', (e) => {
    e.preventDefault();
    save();
  });
  $('rule-validate').addEventListener('click', () => validateOnly());
  $('rule-cancel').addEventListener('click', () => $('rule-dialog').close());
  $('rule-kind').addEventListener('change', () => showKind());
  $('policy-zone-form').addEventListener('submit', (e) => {
    e.preventDefault();
    setTimeZone();
  });
}

export async function show() {
  try {
    policy = await api.policy(ctx.tenant());
  } catch (e) {
    message(`Cannot read the rules: ${e.message}`, true);
    return;
  }
  render();
  loadHistory();
}

function message(text, bad = false) {
  const m = $('rules-message');
  m.textContent = text;
  m.classList.toggle('bad', bad);
}

// --- table ------------------------------------------------------------------------------------------

function render() {
  $('rules-title').textContent = `Rules of ${policy.tenant}`;
  $('policy-version').textContent = String(policy.version);
  $('policy-timeZone').value = policy.timeZone || '';
  $('policy-zone-shown').textContent = policy.timeZone || 'UTC';
  const body = clear($('rules-table').tBodies[0]);
  for (const r of policy.rules) {
    body.append(row(r));
  }
  $('rules-empty').hidden = policy.rules.length > 0;
}

function row(r) {
  const shadow = r.mode === 'shadow';
  const sw = r.sendWindow;
  return el('tr', { 'data-rule': r.id },
    el('td', { 'data-label': 'Rule' }, el('span', {},
      el('span', { class: 'rule-id' }, r.id), r.description ? el('span', { class: 'desc' }, r.description) : null)),
    el('td', { 'data-label': 'Key' }, sw ? '-' : (r.key || []).join(' + ')),
    el('td', { 'data-label': 'Limit', class: 'limit' }, sw ? 'sends only ' + windowSummary(sw)
      : `${r.limit} per ${r.window}` + (r.headroom ? ` (headroom ${headroomText(r.headroom)})` : '')),
    el('td', { 'data-label': 'Algorithm' }, sw ? `send window (${windowZone(sw)} time)` : (r.algorithm || 'sliding-log')
      + (r.precision ? ` (precision ${r.precision})` : '') + (r.zone ? ` (${r.zone})` : '')),
    el('td', { 'data-label': 'Mode' }, el('span', { class: 'badge ' + (shadow ? 'shadow' : 'enforce') },
      shadow ? 'shadow' : 'enforce')),
    el('td', { 'data-label': 'Match' }, conditions(r)),
    el('td', { class: 'actions-cell' },
      el('button', { type: 'button', class: 'small secondary', 'aria-label': `Edit ${r.id}`,
        onclick: () => openEditor(r) }, 'Edit'),
      el('button', { type: 'button', class: 'small secondary mode-toggle',
        'aria-label': shadow ? `Enforce ${r.id}` : `Switch ${r.id} to shadow`,
        onclick: () => setMode(r, shadow ? 'enforce' : 'shadow') }, shadow ? 'Enforce' : 'Shadow'),
      el('button', { type: 'button', class: 'small secondary', 'aria-label': `Delete ${r.id}`,
        onclick: () => remove(r) }, 'Delete')));
}

function windowZone(sw) {
  return sw.zone && sw.zone !== 'recipient' ? sw.zone : "recipient's";
}

/** "mon, tue 08:00-21:00; sat 10:00-20:00; closed 2026-12-25" */
function windowSummary(sw) {
  return intervalLines(sw).join('; ') + ((sw.closed || []).length ? '; closed ' + sw.closed.join(', ') : '');
}

/** One line per interval, as the editor takes them: "mon, tue 08:00-21:00" (no days: every day). */
function intervalLines(sw) {
  return (sw.allow || []).map((i) => ((i.days || []).length && i.days.length < 7 ? i.days.join(', ') + ' ' : '')
    + `${i.from}-${i.to}`);
}

function conditions(r) {
  const parts = [];
  for (const [label, cond] of [['match', r.match], ['exempt', r.exempt], ['count only', r.countOnly]]) {
    for (const [dim, values] of Object.entries(cond || {})) {
      parts.push(`${label} ${dim} ∈ {${[].concat(values).join(', ')}}`);
    }
  }
  return parts.length ? parts.join('; ') : 'all messages';
}

async function loadHistory() {
  let h;
  try {
    h = await api.history(ctx.tenant());
  } catch (e) {
    return;
  }
  const body = clear($('history-table').tBodies[0]);
  for (const c of h.changes) {
    body.append(el('tr', {},
      el('td', {}, 'v' + c.version),
      el('td', {}, time(c.time)),
      el('td', {}, c.who),
      el('td', {}, c.action + (c.rule ? ' ' + c.rule : ''))));
  }
  if (!h.changes.length) {
    body.append(el('tr', {}, el('td', { colspan: 4, class: 'empty' }, 'No changes recorded since the server started.')));
  }
}

// --- editor -----------------------------------------------------------------------------------------

const FIELDS = ['id', 'description', 'limit', 'window', 'key', 'algorithm', 'precision', 'zone', 'headroom', 'mode',
  'match', 'exempt', 'countOnly', 'sendWindow', 'windowZone', 'closed'];

/** Shows the fields of the kind of rule chosen: a cap's or a send window's. */
function showKind() {
  const windowKind = $('rule-kind').value === 'sendWindow';
  for (const f of $('rule-form').querySelectorAll('.cap-only')) {
    f.hidden = windowKind;
  }
  for (const f of $('rule-form').querySelectorAll('.window-only')) {
    f.hidden = !windowKind;
  }
}

function openEditor(rule) {
  editing = rule;
  const form = $('rule-form');
  clearFieldErrors(form);
  $('rule-form-message').textContent = '';
  $('rule-dialog-title').textContent = rule ? `Edit rule ${rule.id}` : 'Add rule';
  const r = rule || { key: ['recipient'] };
  for (const f of FIELDS) {
    $('rule-' + f).value = '';
  }
  $('rule-id').value = r.id || '';
  $('rule-id').readOnly = !!rule;
  $('rule-description').value = r.description || '';
  $('rule-limit').value = r.limit ?? '';
  $('rule-window').value = r.window || '';
  $('rule-key').value = (r.key || []).join(', ');
  $('rule-algorithm').value = r.algorithm || 'sliding-log';
  $('rule-precision').value = r.precision ?? '';
  $('rule-zone').value = r.zone || '';
  $('rule-headroom').value = headroomText(r.headroom);
  $('rule-mode').value = r.mode || 'enforce';
  $('rule-match').value = conditionText(r.match);
  $('rule-exempt').value = conditionText(r.exempt);
  $('rule-countOnly').value = conditionText(r.countOnly);
  $('rule-kind').value = r.sendWindow ? 'sendWindow' : 'cap';
  $('rule-kind').disabled = !!rule;
  if (r.sendWindow) {
    $('rule-sendWindow').value = intervalLines(r.sendWindow).join('\n');
    $('rule-windowZone').value = r.sendWindow.zone || 'recipient';
    $('rule-closed').value = (r.sendWindow.closed || []).join(', ');
  } else {
    $('rule-windowZone').value = 'recipient';
  }
  showKind();
  $('rule-dialog').showModal();
  (!rule ? $('rule-id') : rule.sendWindow ? $('rule-sendWindow') : $('rule-limit')).focus();
}

function conditionText(cond) {
  return Object.entries(cond || {}).map(([dim, values]) => `${dim}: ${[].concat(values).join(', ')}`).join('\n');
}

/** "channel: sms, push" lines to {channel: ["sms", "push"]}; format problems go to `errors`. */
function parseConditions(field, text, errors) {
  const out = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const colon = line.indexOf(':', line.startsWith('attr:') ? 5 : 0);
    if (colon < 0) {
      errors.push({ field, message: `"${line}": write one condition per line as dimension: value, value` });
      continue;
    }
    out[line.slice(0, colon).trim()] = line.slice(colon + 1).split(',').map((v) => v.trim()).filter(Boolean);
  }
  return out;
}

const TIME = '(\\d{1,2}:\\d{2}(?::\\d{2})?)';
const INTERVAL = new RegExp(`^(?:(.*?)\\s+)?${TIME}\\s*-\\s*${TIME}$`);

/** "mon, tue 08:00-21:00" lines to intervals {days, from, to}; format problems go to `errors`. */
function parseIntervals(text, errors) {
  const allow = [];
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const m = INTERVAL.exec(line);
    if (!m) {
      errors.push({ field: 'sendWindow', message: `"${line}": write one interval per line as days from-to, `
        + 'e.g. mon, tue, wed 08:00-21:00 (no days: every day)' });
      continue;
    }
    const interval = { from: m[2], to: m[3] };
    const days = (m[1] || '').split(/[\s,]+/).filter(Boolean);
    if (days.length) {
      interval.days = days;
    }
    allow.push(interval);
  }
  return allow;
}

/** The send window of the form: its intervals, zone and closed dates. */
function windowFromForm(errors) {
  const sw = { allow: parseIntervals($('rule-sendWindow').value, errors) };
  const zone = $('rule-windowZone').value.trim();
  if (zone && zone !== 'recipient') {
    sw.zone = zone;
  }
  const closed = $('rule-closed').value.split(/[\s,]+/).filter(Boolean);
  if (closed.length) {
    sw.closed = closed;
  }
  return sw;
}

/** Numbers stay numbers; anything else is sent as typed, so the server names what is wrong with it. */
function numberOrText(text) {
  return /^-?\d+$/.test(text) ? Number(text) : text;
}

/** The rule as the API takes it, and the errors found while reading the form (format only). */
function ruleFromForm() {
  const errors = [];
  const v = (f) => $('rule-' + f).value.trim();
  const r = {};
  if (v('id')) r.id = v('id');
  if (v('description')) r.description = v('description');
  if (v('kind') === 'sendWindow') {
    r.sendWindow = windowFromForm(errors);
    if (v('mode') === 'shadow') r.mode = 'shadow';
    conditionsFromForm(r, errors);
    return { rule: r, errors };
  }
  if (v('limit')) r.limit = numberOrText(v('limit'));
  if (v('window')) r.window = v('window');
  if (v('key')) r.key = v('key').split(',').map((k) => k.trim()).filter(Boolean);
  if (v('algorithm') !== 'sliding-log') r.algorithm = v('algorithm');
  if (v('precision')) r.precision = numberOrText(v('precision'));
  if (v('zone')) r.zone = v('zone');
  if (v('headroom')) r.headroom = headroomFromText(v('headroom'), errors);
  if (v('mode') === 'shadow') r.mode = 'shadow';
  conditionsFromForm(r, errors);
  return { rule: r, errors };
}

/** `{normal: 5, low: 15}` as the editor shows it: `normal=5, low=15`. */
function headroomText(h) {
  return h ? Object.entries(h).map(([p, n]) => `${p}=${n}`).join(', ') : '';
}

/** The editor's `normal=5, low=15` as an object; the server judges the classes and the values. */
function headroomFromText(text, errors) {
  const h = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) {
      errors.push({ field: 'headroom', message: `"${part}": write priority=units, e.g. low=15` });
    } else {
      h[part.slice(0, eq).trim()] = numberOrText(part.slice(eq + 1).trim());
    }
  }
  return h;
}

function conditionsFromForm(r, errors) {
  const match = parseConditions('match', $('rule-match').value.trim(), errors);
  if (Object.keys(match).length) r.match = match;
  const exempt = parseConditions('exempt', $('rule-exempt').value.trim(), errors);
  if (Object.keys(exempt).length) r.exempt = exempt;
  const countOnly = parseConditions('countOnly', $('rule-countOnly').value.trim(), errors);
  if (Object.keys(countOnly).length) r.countOnly = countOnly;
}

/** An error about one interval of a send window names its line in the editor ("line 2: ..."). */
function onLine(field, text) {
  const m = /^sendWindow\.allow\[(\d+)\]/.exec(field || '');
  return m ? `line ${Number(m[1]) + 1}: ${text}` : text;
}

/** The editor's field for a server error's field: a send window's zone and closed dates have their own. */
function editorField(field) {
  if (!field) {
    return field;
  }
  if (field === 'sendWindow.zone') {
    return 'windowZone';
  }
  if (field.startsWith('headroom')) {
    return 'headroom';
  }
  return field.startsWith('sendWindow.closed') ? 'closed' : field;
}

/** The policy's rules with `rule` in place of `replacing` (or appended). */
function candidate(rule, replacing) {
  const rules = policy.rules.map((r) => (replacing && r.id === replacing ? rule : r));
  if (!replacing) {
    rules.push(rule);
  }
  return rules;
}

/** Shows an API error in the editor: per field when the server names one, else above the buttons. */
function showError(e, ruleId) {
  const list = e.errors && e.errors.length
    ? e.errors.filter((x) => typeof x === 'object').map((x) => ({
      field: !x.rule || x.rule === ruleId ? editorField(x.field) : null,
      message: x.rule && x.rule !== ruleId ? `rule ${x.rule}, ${x.field}: ${x.message}` : onLine(x.field, x.message),
    }))
    : [{ field: editorField(e.field), message: e.message }];
  const unplaced = showFieldErrors('rule-', list);
  if (e.status === 412) {
    unplaced.push('Someone changed the policy meanwhile: press Reload, then make your change again.');
  }
  $('rule-form-error').textContent = unplaced.join(' ');
}

/** Validates the editor's rule on the server. Returns the rule when valid, null otherwise. */
async function check() {
  const form = $('rule-form');
  clearFieldErrors(form);
  $('rule-form-message').textContent = '';
  const { rule, errors } = ruleFromForm();
  if (errors.length) {
    $('rule-form-error').textContent = showFieldErrors('rule-', errors).join(' ');
    return null;
  }
  try {
    await api.validate(ctx.tenant(), candidate(rule, editing && editing.id));
    return rule;
  } catch (e) {
    if (e instanceof ApiError && e.status > 0) {
      showError(e, rule.id);
    }
    return null;
  }
}

async function validateOnly() {
  if (await check()) {
    $('rule-form-message').textContent = 'Valid: the server accepts this rule.';
  }
}

async function save() {
  const rule = await check();
  if (!rule) {
    return;
  }
  try {
    const next = editing
      ? await api.putRule(ctx.tenant(), editing.id, rule, policy.version)
      : await api.addRule(ctx.tenant(), rule, policy.version);
    $('rule-dialog').close();
    message(`Rule ${rule.id} ${editing ? 'saved' : 'added'}: the policy is now version ${next.version}.`);
    await show();
  } catch (e) {
    if (e instanceof ApiError && e.status > 0) {
      showError(e, rule.id);
    }
  }
}

async function setMode(rule, mode) {
  const next = { ...rule };
  if (mode === 'shadow') {
    next.mode = 'shadow';
  } else {
    delete next.mode;
  }
  try {
    await api.validate(ctx.tenant(), candidate(next, rule.id));
    const p = await api.putRule(ctx.tenant(), rule.id, next, policy.version);
    message(`Rule ${rule.id} is now in ${mode} mode: the policy is now version ${p.version}.`);
  } catch (e) {
    message(`Cannot switch ${rule.id} to ${mode}: ${e.message}`, true);
  }
  await show();
  const button = document.querySelector(`tr[data-rule="${CSS.escape(rule.id)}"] .mode-toggle`);
  if (button) {
    button.focus();
  }
}

async function remove(rule) {
  const what = rule.sendWindow ? `sends only ${windowSummary(rule.sendWindow)}` : `${rule.limit} per ${rule.window}`;
  const ok = await confirmDialog(`Delete rule ${rule.id}?`, `Messages will no longer be capped by "${rule.id}" `
    + `(${what}) from the next decision on.`, 'Delete rule');
  if (!ok) {
    return;
  }
  try {
    const p = await api.deleteRule(ctx.tenant(), rule.id, policy.version);
    message(`Rule ${rule.id} deleted: the policy is now version ${p.version}.`);
  } catch (e) {
    message(`Cannot delete ${rule.id}: ${e.message}`, true);
  }
  await show();
}

// --- the policy's time zone ------------------------------------------------------------------------

/** Replaces the policy with the same rules and the typed zone (empty: none, so UTC), If-Match its version. */
async function setTimeZone() {
  const form = $('policy-zone-form');
  clearFieldErrors(form);
  const zone = $('policy-timeZone').value.trim();
  const next = { rules: policy.rules };
  if (zone) {
    next.timeZone = zone;
  }
  try {
    const p = await api.putPolicy(ctx.tenant(), next, policy.version);
    message(`The policy's time zone is now ${zone || 'UTC'}: the policy is now version ${p.version}.`);
  } catch (e) {
    if (e instanceof ApiError && e.status > 0) {
      const errors = e.errors && e.errors.length ? e.errors.filter((x) => typeof x === 'object') : [e];
      const unplaced = showFieldErrors('policy-', errors.map((x) => ({
        field: x.field === 'timeZone' ? 'timeZone' : null, message: x.message })));
      if (unplaced.length) {
        message(`Cannot set the time zone: ${unplaced.join(' ')}`, true);
      }
    }
    return;
  }
  await show();
}
