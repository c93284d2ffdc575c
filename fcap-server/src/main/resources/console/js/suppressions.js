// The suppression list of the tenant: find a recipient's entry (GET /v1/suppressions/{recipient}),
// add or replace one (PUT), remove one after a confirmation (DELETE), import a CSV or NDJSON file
// (POST /v1/suppressions/import, streamed by XMLHttpRequest for its upload progress) and browse the
// list a page at a time (GET /v1/suppressions, by cursor).
//
// A store that cannot list its entries answers the listing 501: the list says so and the rest of
// the view still works. A key without the `suppress` role gets 403 on every call: the view shows the
// server's message and keeps working once a key that may is connected.

import { api, ApiError } from './api.js';
import { $, el, clear, duration, time, clearFieldErrors, showFieldErrors, confirmDialog } from './ui.js';

const params = new URLSearchParams(location.search);
/** Entries per page of the list (?pageSize= in the URL; the server takes 1 to 1000). */
const PAGE_SIZE = Math.min(1000, Math.max(1, Number(params.get('pageSize')) || 50));
const UNITS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

let ctx;
let tenant = null; // the tenant the view shows
let found = null; // the recipient whose entry (or its absence) is shown
let shown = null; // that entry, when it has one
let cursors = [null]; // cursors[i]: where page i starts (null: the first page)
let page = 0;
let importing = false;

export function init(context) {
  ctx = context;
  $('sup-find-form').addEventListener('submit', (e) => {
    e.preventDefault();
    find($('sup-find-recipient').value.trim());
  });
  $('sup-add-form').addEventListener('submit', (e) => {
    e.preventDefault();
    save();
  });
  $('sup-entry-edit').addEventListener('click', () => edit());
  $('sup-entry-remove').addEventListener('click', () => remove(shown.recipient, $('sup-entry-remove')));
  $('sup-file').addEventListener('change', () => guessFormat());
  $('sup-import-form').addEventListener('submit', (e) => {
    e.preventDefault();
    importFile();
  });
  $('sup-first').addEventListener('click', () => list(0));
  $('sup-prev').addEventListener('click', () => list(page - 1));
  $('sup-next').addEventListener('click', () => list(page + 1));
}

export async function show() {
  if (tenant !== ctx.tenant()) {
    tenant = ctx.tenant();
    found = null;
    cursors = [null];
    page = 0;
    $('sup-entry').hidden = true;
    $('sup-none').hidden = true;
  }
  message(''); // a refusal said before may not hold for the key connected now
  $('sup-title').textContent = `Suppression list of ${tenant}`;
  if (found) {
    await find(found);
  }
  await list(page);
}

function message(text, bad = false) {
  const m = $('sup-message');
  m.textContent = text;
  m.classList.toggle('bad', bad);
}

/** A 403 (a key without the role or the tenant): said once at the top of the view; true if it was one. */
function refused(e) {
  if (e instanceof ApiError && e.status === 403) {
    message(`This API key may not use the suppression list of tenant ${ctx.tenant()} (403): ${e.message}`, true);
    return true;
  }
  return false;
}

/** A 4xx other than 401 (which the banner reports, hiding the view). */
const badInput = (e) => e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 401;

// --- find -------------------------------------------------------------------------------------------

async function find(recipient) {
  clearFieldErrors($('sup-find-form'));
  if (!recipient) {
    showFieldErrors('sup-find-', [{ field: 'recipient', message: 'Type a recipient to look up.' }]);
    return;
  }
  let entry;
  try {
    entry = await api.suppression(ctx.tenant(), recipient);
  } catch (e) {
    $('sup-entry').hidden = true;
    $('sup-none').hidden = true;
    if (e instanceof ApiError && e.status === 404 && e.code === 'suppression_not_found') {
      found = recipient;
      $('sup-none').textContent = `${recipient} is not suppressed in tenant ${ctx.tenant()}: `
        + 'messages to it are decided by the rules alone.';
      $('sup-none').hidden = false;
    } else if (!refused(e) && badInput(e)) {
      showFieldErrors('sup-find-', [{ field: 'recipient', message: e.message }]);
    }
    return;
  }
  found = recipient;
  renderEntry(entry);
}

function renderEntry(entry) {
  shown = entry;
  $('sup-none').hidden = true;
  $('sup-entry').hidden = false;
  $('sup-entry').dataset.recipient = entry.recipient;
  $('sup-entry-recipient').textContent = entry.recipient;
  $('sup-entry-channels').textContent = scope(entry.channels, 'every channel');
  $('sup-entry-categories').textContent = scope(entry.categories, 'every category');
  $('sup-entry-reason').textContent = entry.reason || '-';
  $('sup-entry-addedBy').textContent = entry.addedBy || '-';
  $('sup-entry-addedAt').textContent = time(entry.addedAt);
  clear($('sup-entry-expiresAt')).append(expiry(entry.expiresAt));
  $('sup-entry-remove').setAttribute('aria-label', `Remove ${entry.recipient}`);
}

const scope = (values, all) => (values && values.length ? values.join(', ') : all);

function expiry(ms) {
  if (ms === undefined || ms < 0) {
    return 'never';
  }
  return el('span', {}, time(ms), el('span', { class: 'desc' }, `in ${duration(Math.max(0, ms - Date.now()))}`));
}

/** Fills the form with the shown entry, to replace it. */
function edit() {
  clearFieldErrors($('sup-add-form'));
  $('sup-recipient').value = shown.recipient;
  $('sup-channels').value = shown.channels.join(', ');
  $('sup-categories').value = shown.categories.join(', ');
  $('sup-reason').value = shown.reason || '';
  $('sup-expiresAt').value = shown.expiresAt >= 0 ? new Date(shown.expiresAt).toISOString().slice(0, 19) + 'Z' : '';
  $('sup-recipient').focus();
}

// --- add --------------------------------------------------------------------------------------------

/** The recipient and entry the form describes; what the browser can tell is wrong goes in `errors`. */
function entryFromForm(errors) {
  const recipient = $('sup-recipient').value.trim();
  if (!recipient) {
    errors.push({ field: 'recipient', message: 'Type the recipient to suppress.' });
  }
  const entry = {};
  const channels = commaList($('sup-channels').value);
  const categories = commaList($('sup-categories').value);
  if (channels.length) {
    entry.channels = channels;
  }
  if (categories.length) {
    entry.categories = categories;
  }
  const reason = $('sup-reason').value.trim();
  if (reason) {
    entry.reason = reason;
  }
  const expires = $('sup-expiresAt').value.trim();
  if (expires) {
    const at = parseExpiry(expires, Date.now());
    if (at === null) {
      errors.push({ field: 'expiresAt', message: `"${expires}" is not a time: write in how long (12h, 30d, 1d12h) `
        + 'or when (2026-12-31 18:00 in this browser\'s time, 2026-12-31T18:00Z in UTC).' });
    } else {
      entry.expiresAt = at;
    }
  }
  return { recipient, entry };
}

function commaList(text) {
  return text.split(',').map((v) => v.trim()).filter(Boolean);
}

/**
 * Epoch milliseconds of an expiry typed as a span from now ("30d", "1d12h") or as a date with an
 * optional time ("2026-12-31", "2026-12-31 18:00", in the browser's zone; a trailing Z: UTC); null
 * when it is neither. Whether it lies in the future is the server's to say.
 */
export function parseExpiry(text, now) {
  const t = text.replace(/\s+/g, ' ').trim();
  const span = t.replace(/ /g, '');
  if (/^(\d+[smhdw])+$/i.test(span)) {
    let ms = 0;
    for (const [, n, unit] of span.toLowerCase().matchAll(/(\d+)([smhdw])/g)) {
      ms += Number(n) * UNITS[unit];
    }
    return now + ms;
  }
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[ T](\d{2}):(\d{2})(?::(\d{2}))?)? ?(Z|UTC)?$/i.exec(t);
  if (!m) {
    return null;
  }
  const [y, mo, d, h, mi, s] = m.slice(1, 7).map((v) => Number(v || 0));
  const utc = Boolean(m[7]);
  const date = utc ? new Date(Date.UTC(y, mo - 1, d, h, mi, s)) : new Date(y, mo - 1, d, h, mi, s);
  const back = utc ? [date.getUTCFullYear(), date.getUTCMonth() + 1, date.getUTCDate(), date.getUTCHours(),
    date.getUTCMinutes()] : [date.getFullYear(), date.getMonth() + 1, date.getDate(), date.getHours(), date.getMinutes()];
  // 2026-02-30 or 25:00 roll over into another day: not a date that exists
  return back.join() === [y, mo, d, h, mi].join() ? date.getTime() : null;
}

async function save() {
  const form = $('sup-add-form');
  clearFieldErrors(form);
  const errors = [];
  const { recipient, entry } = entryFromForm(errors);
  if (errors.length) {
    $('sup-add-error').textContent = showFieldErrors('sup-', errors).join(' ');
    return;
  }
  let saved;
  try {
    saved = await api.suppress(ctx.tenant(), recipient, entry);
  } catch (e) {
    if (refused(e)) {
      $('sup-add-error').textContent = `Not saved: ${e.message}`;
    } else if (badInput(e)) {
      const field = e.field === 'tenant' ? null : e.field;
      $('sup-add-error').textContent = showFieldErrors('sup-', [{ field, message: e.message }]).join(' ');
    }
    return;
  }
  message(`${saved.recipient} is suppressed (${scope(saved.channels, 'every channel')}; `
    + `${scope(saved.categories, 'every category')}): no message in that scope goes to it`
    + (saved.expiresAt >= 0 ? ` until ${time(saved.expiresAt)}.` : '.'));
  form.reset();
  found = saved.recipient;
  $('sup-find-recipient').value = saved.recipient;
  renderEntry(saved);
  await list(page);
}

// --- remove -----------------------------------------------------------------------------------------

async function remove(recipient, returnFocus) {
  const ok = await confirmDialog(`Remove ${recipient}?`, `${recipient} leaves the suppression list of tenant `
    + `${ctx.tenant()}: messages to it are decided by the rules again, at once, on every node.`, 'Remove');
  if (!ok) {
    returnFocus.focus();
    return;
  }
  let r;
  try {
    r = await api.unsuppress(ctx.tenant(), recipient);
  } catch (e) {
    if (!refused(e)) {
      message(`Cannot remove ${recipient}: ${e.message}`, true);
    }
    return;
  }
  message(r.removed ? `${recipient} was removed from the suppression list.` : `${recipient} had no entry.`);
  if (found === recipient) {
    await find(recipient);
  }
  await list(page);
  $('sup-find-recipient').focus();
}

// --- import -----------------------------------------------------------------------------------------

function guessFormat() {
  const file = $('sup-file').files[0];
  if (file) {
    const ndjson = /\.(ndjson|jsonl|json)$/i.test(file.name) || file.type === 'application/x-ndjson';
    $('sup-format').value = ndjson ? 'application/x-ndjson' : 'text/csv';
  }
}

function bytes(n) {
  if (n < 1024) {
    return n + ' B';
  }
  return n < 1024 * 1024 ? (n / 1024).toFixed(1) + ' KB' : (n / (1024 * 1024)).toFixed(1) + ' MB';
}

function progress(sent, total, name) {
  const share = total > 0 ? Math.min(1, sent / total) : 1;
  $('sup-import-progress').value = Math.round(share * 100);
  $('sup-import-status').textContent = `Uploading ${name}: ${Math.round(share * 100)} % (${bytes(sent)} of `
    + `${bytes(total)})`;
}

async function importFile() {
  if (importing) {
    return;
  }
  const form = $('sup-import-form');
  clearFieldErrors(form);
  const file = $('sup-file').files[0];
  if (!file) {
    showFieldErrors('sup-', [{ field: 'file', message: 'Choose a CSV or NDJSON file to import.' }]);
    return;
  }
  importing = true;
  $('sup-import').disabled = true;
  $('sup-import-result').hidden = true;
  $('sup-import-errors-wrap').hidden = true;
  $('sup-import-state').hidden = false;
  progress(0, file.size, file.name);
  let r;
  try {
    r = await api.importSuppressions(ctx.tenant(), file, $('sup-format').value,
      (sent, total) => progress(sent, total, file.name), () => {
        $('sup-import-progress').value = 100;
        $('sup-import-status').textContent = `Uploaded ${file.name} (${bytes(file.size)}); the server is `
          + 'applying the rows…';
      });
  } catch (e) {
    $('sup-import-status').textContent = `The import of ${file.name} failed.`;
    refused(e);
    showFieldErrors('sup-', [{ field: 'file', message: e.message }]);
    return;
  } finally {
    importing = false;
    $('sup-import').disabled = false;
  }
  $('sup-import-progress').value = 100;
  $('sup-import-status').textContent = `Imported ${file.name} (${bytes(file.size)}) into tenant ${ctx.tenant()}.`;
  renderImport(r);
  await list(page);
}

function renderImport(r) {
  const result = $('sup-import-result');
  result.hidden = false;
  result.classList.toggle('bad', r.rejected > 0);
  result.textContent = `${r.applied.toLocaleString()} applied, ${r.rejected.toLocaleString()} rejected`
    + (r.rejected > 0 ? ': the rows below were skipped, every other row was applied.' : '.');
  const body = clear($('sup-import-errors').tBodies[0]);
  for (const e of r.errors) {
    body.append(el('tr', { 'data-line': String(e.line) },
      el('td', { class: 'num line' }, String(e.line)),
      el('td', { class: 'mono' }, e.code),
      el('td', { class: 'mono' }, e.field || '-'),
      el('td', { class: 'error-message' }, e.message)));
  }
  if (r.errorsOmitted > 0) {
    body.append(el('tr', {}, el('td', { colspan: 4, class: 'empty' },
      `and ${r.errorsOmitted.toLocaleString()} more bad rows, not listed`)));
  }
  $('sup-import-errors-wrap').hidden = r.errors.length === 0;
}

// --- list -------------------------------------------------------------------------------------------

async function list(index) {
  if (index < 0 || index >= cursors.length) {
    return;
  }
  const lm = $('sup-list-message');
  let r;
  try {
    r = await api.suppressions(ctx.tenant(), cursors[index], PAGE_SIZE);
  } catch (e) {
    $('sup-list-wrap').hidden = true;
    $('sup-list-empty').hidden = true;
    pager(false, false);
    lm.classList.add('bad');
    if (e instanceof ApiError && e.status === 501) {
      lm.textContent = `This server's store does not list its suppression entries (501): ${e.message}. Find, `
        + 'add, remove and import still work.';
    } else if (refused(e)) {
      lm.textContent = 'The list needs the suppress role.';
    } else {
      lm.textContent = `Cannot read the list: ${e.message}`;
    }
    return;
  }
  page = index;
  cursors.length = page + 1;
  if (r.nextCursor) {
    cursors.push(r.nextCursor);
  }
  lm.textContent = '';
  lm.classList.remove('bad');
  renderList(r.items);
  pager(page > 0, Boolean(r.nextCursor));
}

function pager(back, more) {
  $('sup-first').disabled = !back;
  $('sup-prev').disabled = !back;
  $('sup-next').disabled = !more;
  $('sup-list-meta').textContent = back || more ? `page ${page + 1}, ${PAGE_SIZE} a page, in recipient order`
    : 'in recipient order';
}

function renderList(items) {
  const body = clear($('sup-list').tBodies[0]);
  for (const e of items) {
    const button = el('button', { type: 'button', class: 'danger small', 'aria-label': `Remove ${e.recipient}` },
      'Remove…');
    button.addEventListener('click', () => remove(e.recipient, button));
    body.append(el('tr', { 'data-recipient': e.recipient },
      el('td', { class: 'mono recipient' }, e.recipient),
      el('td', {}, scope(e.channels, 'every channel')),
      el('td', {}, scope(e.categories, 'every category')),
      el('td', {}, e.reason || '-', el('span', { class: 'desc' }, e.addedBy ? `by ${e.addedBy}` : '')),
      el('td', {}, time(e.addedAt)),
      el('td', {}, expiry(e.expiresAt)),
      el('td', { class: 'actions-cell' }, button)));
  }
  $('sup-list-wrap').hidden = items.length === 0;
  $('sup-list-empty').hidden = items.length > 0 || page > 0;
}
