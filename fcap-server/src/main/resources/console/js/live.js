// The live view: rates computed from successive scrapes of GET /metrics (the counters the server
// really keeps; nothing here is simulated). Each poll is a snapshot of the tenant's counters; a rate
// is the difference of two snapshots over the time between them. Snapshots of the last five minutes
// are kept in the page, so the charts fill from the moment the console was opened. A counter that
// goes down (the server restarted) counts as a restart from zero.

import { api } from './api.js';
import { parseMetrics, sum, buckets, quantile } from './prom.js';
import { $, el, clear, rate, percent, duration } from './ui.js';

const SPAN_MS = 5 * 60 * 1000;
const params = new URLSearchParams(location.search);
const POLL_MS = Math.max(200, Number(params.get('poll')) || 2000);

let ctx;
let timer = null;
let snapshots = [];
let tenantOfSnapshots = null;
let charts = null;
let paused = false;
const isVisible = () => location.hash === '#live';

export function init(context) {
  ctx = context;
  $('live-every').textContent = duration(POLL_MS);
  $('live-span').textContent = duration(SPAN_MS).replace('5m', '5 minutes');
  $('live-pause').addEventListener('click', () => {
    paused = !paused;
    $('live-pause').setAttribute('aria-pressed', String(paused));
    $('live-pause').textContent = paused ? 'Resume' : 'Pause';
  });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    if (charts) {
      Object.values(charts).forEach((c) => c.destroy());
      charts = null;
      if (isVisible()) {
        draw();
      }
    }
  });
}

/** Starts polling (idempotent); polling goes on in the background so the history fills. */
export function start() {
  if (!timer) {
    poll();
    timer = setInterval(poll, POLL_MS);
  }
}

export function stop() {
  clearInterval(timer);
  timer = null;
}

export async function show() {
  start();
  draw();
}

async function poll() {
  if (paused) {
    return;
  }
  let text;
  try {
    text = await api.metrics();
  } catch (e) {
    return; // the banner says why; the next poll retries
  }
  const tenant = ctx.tenant();
  if (tenant !== tenantOfSnapshots) {
    snapshots = [];
    tenantOfSnapshots = tenant;
  }
  snapshots.push(snapshot(parseMetrics(text), tenant));
  const oldest = Date.now() - SPAN_MS;
  while (snapshots.length > 2 && snapshots[0].t < oldest) {
    snapshots.shift();
  }
  if (isVisible()) {
    draw();
  }
}

function snapshot(samples, tenant) {
  const rules = new Map();
  for (const s of samples) {
    if (s.name === 'fcap_rule_decisions_total' && s.labels.tenant === tenant) {
      const r = rules.get(s.labels.rule) || { allowed: 0, blocked: 0, shadow_blocked: 0 };
      r[s.labels.outcome] = (r[s.labels.outcome] || 0) + s.value;
      rules.set(s.labels.rule, r);
    }
  }
  return {
    t: Date.now(),
    allowed: sum(samples, 'fcap_decisions_total', { tenant, outcome: 'allowed' }),
    denied: sum(samples, 'fcap_decisions_total', { tenant, outcome: 'denied' }),
    degraded: sum(samples, 'fcap_degraded_decisions_total', { tenant }),
    storeBuckets: buckets(samples, 'fcap_store_seconds'),
    storeSum: sum(samples, 'fcap_store_seconds_sum'),
    storeCount: sum(samples, 'fcap_store_seconds_count'),
    rules,
  };
}

const delta = (a, b) => Math.max(0, b - a);

/** The rates between two snapshots. */
function interval(a, b) {
  const secs = Math.max(0.001, (b.t - a.t) / 1000);
  const allowed = delta(a.allowed, b.allowed) / secs;
  const denied = delta(a.denied, b.denied) / secs;
  const storeCalls = delta(a.storeCount, b.storeCount);
  const rules = new Map();
  for (const [id, r] of b.rules) {
    const p = a.rules.get(id) || { allowed: 0, blocked: 0, shadow_blocked: 0 };
    const x = {
      allowed: delta(p.allowed, r.allowed) / secs,
      blocked: delta(p.blocked, r.blocked) / secs,
      shadow: delta(p.shadow_blocked, r.shadow_blocked) / secs,
      blockedTotal: r.blocked,
      shadowTotal: r.shadow_blocked,
    };
    const all = x.allowed + x.blocked + x.shadow;
    x.denialRate = all > 0 ? (x.blocked + x.shadow) / all : null;
    rules.set(id, x);
  }
  const p99 = quantile(0.99, a.storeBuckets, b.storeBuckets);
  return {
    t: b.t,
    decisions: allowed + denied,
    denials: denied,
    denialRate: allowed + denied > 0 ? denied / (allowed + denied) : null,
    degraded: delta(a.degraded, b.degraded) / secs,
    storeMeanMs: storeCalls > 0 ? (delta(a.storeSum, b.storeSum) / storeCalls) * 1000 : null,
    storeP99Ms: p99 === null ? null : p99 * 1000,
    rules,
  };
}

function intervals() {
  const out = [];
  for (let i = 1; i < snapshots.length; i++) {
    out.push(interval(snapshots[i - 1], snapshots[i]));
  }
  return out;
}

// --- drawing --------------------------------------------------------------------------------------------

function draw() {
  const list = intervals();
  const last = list[list.length - 1];
  const latest = snapshots[snapshots.length - 1];
  $('tile-decisions').textContent = last ? rate(last.decisions) : '-';
  $('tile-denials').textContent = last ? rate(last.denials) : '-';
  $('tile-rate').textContent = last ? percent(last.denialRate) : '-';
  $('tile-degraded').textContent = last ? rate(last.degraded) : '-';
  $('tile-store').textContent = last && last.storeP99Ms !== null ? last.storeP99Ms.toFixed(2) + ' ms' : '-';
  $('tile-total').textContent = latest ? (latest.allowed + latest.denied).toLocaleString() : '-';
  table(last, latest);
  charts = charts || makeCharts();
  if (charts) {
    updateCharts(list);
  }
}

function table(last, latest) {
  const body = clear($('live-rules').tBodies[0]);
  const ids = latest ? [...latest.rules.keys()].sort() : [];
  for (const id of ids) {
    const r = last ? last.rules.get(id) : null;
    const totals = latest.rules.get(id);
    body.append(el('tr', { 'data-rule': id },
      el('td', {}, el('span', { class: 'rule-id' }, id)),
      el('td', { class: 'num' }, r ? rate(r.allowed) : '-'),
      el('td', { class: 'num' }, r ? rate(r.blocked) : '-'),
      el('td', { class: 'num' }, r ? rate(r.shadow) : '-'),
      el('td', { class: 'num' }, r ? percent(r.denialRate) : '-'),
      el('td', { class: 'num blocked-total' }, String(totals.blocked + totals.shadow_blocked))));
  }
  $('live-empty').hidden = ids.length > 0;
}

function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

function makeCharts() {
  if (typeof window.Chart === 'undefined') {
    document.querySelectorAll('.chart-box').forEach((b) => {
      b.replaceChildren(el('p', { class: 'empty' }, 'Charts unavailable (Chart.js did not load); the table below has the figures.'));
    });
    return null;
  }
  const Chart = window.Chart;
  Chart.defaults.color = cssVar('--muted');
  Chart.defaults.borderColor = cssVar('--grid');
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  const base = (yTitle, extra = {}) => ({
    type: 'line',
    data: { labels: [], datasets: [] },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      elements: { point: { radius: 0 }, line: { borderWidth: 2, tension: 0.2 } },
      scales: {
        x: { ticks: { maxTicksLimit: 6, maxRotation: 0 } },
        y: { beginAtZero: true, title: { display: true, text: yTitle } },
        ...extra,
      },
      plugins: { legend: { position: 'bottom', labels: { boxWidth: 12 } } },
    },
  });
  const rates = new Chart($('chart-rates'), base('per second'));
  rates.data.datasets = [series('Decisions/s', 1), series('Denials/s', 2)];
  const rules = new Chart($('chart-rules'), base('% denied'));
  rules.options.scales.y.suggestedMax = 10;
  const store = new Chart($('chart-store'), base('ms', {
    y1: { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false }, title: { display: true, text: 'degraded/s' } },
  }));
  store.data.datasets = [series('Store mean (ms)', 1), series('Store p99 (ms)', 3),
    { ...series('Degraded/s', 2), yAxisID: 'y1' }];
  return { rates, rules, store };
}

function series(label, colour) {
  const c = cssVar('--chart-' + (((colour - 1) % 6) + 1));
  return { label, data: [], borderColor: c, backgroundColor: c, spanGaps: true };
}

function updateCharts(list) {
  const labels = list.map((x) => new Date(x.t).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false }));
  const { rates, rules, store } = charts;
  rates.data.labels = labels;
  rates.data.datasets[0].data = list.map((x) => x.decisions);
  rates.data.datasets[1].data = list.map((x) => x.denials);
  const ids = [...new Set(list.flatMap((x) => [...x.rules.keys()]))].sort();
  rules.data.labels = labels;
  rules.data.datasets = ids.map((id, i) => ({
    ...series(id, i + 1),
    data: list.map((x) => {
      const r = x.rules.get(id);
      return r && r.denialRate !== null ? r.denialRate * 100 : null;
    }),
  }));
  store.data.labels = labels;
  store.data.datasets[0].data = list.map((x) => x.storeMeanMs);
  store.data.datasets[1].data = list.map((x) => x.storeP99Ms);
  store.data.datasets[2].data = list.map((x) => x.degraded);
  rates.update('none');
  rules.update('none');
  store.update('none');
}
