// The console's entry point: connection (tenant and API key), the one alert banner, and the views
// (#rules, #live, #inspect, #try, #suppressions), switched by the URL hash so each view has its own address.

import { api, apiKey, onTrouble, setApiKey } from './api.js';
import { $ } from './ui.js';
import * as rules from './rules.js';
import * as live from './live.js';
import * as inspector from './inspector.js';
import * as tryIt from './tryit.js';
import * as suppressions from './suppressions.js';

const views = { rules, live, inspect: inspector, try: tryIt, suppressions };
const context = {
  tenant: () => $('tenant').value.trim() || 'default',
  connected: false,
};

// --- the alert banner: wrong key, forbidden, server down, server error ------------------------------

let alertKind = null;

function showAlert(kind, text) {
  alertKind = kind;
  $('alert-text').textContent = text;
  $('alert-retry').textContent = kind === 'forbidden' ? 'Dismiss' : 'Retry';
  $('alert').hidden = false;
  document.body.dataset.alert = kind;
}

function hideAlert() {
  alertKind = null;
  $('alert').hidden = true;
  delete document.body.dataset.alert;
}

function setConnection(text, ok) {
  const c = $('connection');
  c.textContent = text;
  c.className = 'connection ' + (ok ? 'ok' : 'bad');
}

onTrouble((kind, error) => {
  switch (kind) {
    case 'ok':
      if (alertKind === 'unreachable' || alertKind === 'server') {
        hideAlert();
        setConnection(connectedText(), true);
      }
      break;
    case 'unauthenticated':
      context.connected = false;
      live.stop();
      setConnection('API key refused', false);
      showAlert(kind, (apiKey() ? 'The server refused this API key' : 'The server needs an API key')
        + ` (401): ${error.message}. Enter a valid key above and press Connect.`);
      break;
    case 'forbidden':
      showAlert(kind, `This API key may not do that (403): ${error.message}.`);
      break;
    case 'unreachable':
      setConnection('Server unreachable', false);
      showAlert(kind, error.message + ' Press Retry when it is back (the live view notices by itself).');
      break;
    case 'server':
      showAlert(kind, `The server failed (${error.status} ${error.code}): ${error.message}`);
      break;
    default:
      break;
  }
});

function connectedText() {
  return `Connected · tenant ${context.tenant()} · ${apiKey() ? 'with API key' : 'no API key (loopback)'}`;
}

async function connect() {
  setApiKey($('api-key').value.trim());
  hideAlert();
  setConnection('Connecting…', true);
  try {
    await api.policy(context.tenant());
  } catch (e) {
    // a refused key or tenant: nothing is read or polled until a connect succeeds (a server that
    // is down is another matter: live polling goes on and notices when it is back)
    if (e.status !== 0) {
      context.connected = false;
      live.stop();
    }
    if (e.status !== 401 && e.status !== 0) {
      setConnection(`Cannot read the rules of tenant ${context.tenant()}`, false);
    }
    return;
  }
  context.connected = true;
  setConnection(connectedText(), true);
  live.start(context);
  await views[currentView()].show(context);
}

// --- views ------------------------------------------------------------------------------------------

function currentView() {
  const name = location.hash.replace('#', '');
  return views[name] ? name : 'rules';
}

async function route() {
  const name = currentView();
  for (const [n, view] of Object.entries(views)) {
    $('view-' + n).hidden = n !== name;
    $('tab-' + n).toggleAttribute('aria-current', n === name);
    if (n === name) {
      $('tab-' + n).setAttribute('aria-current', 'page');
    }
  }
  document.title = `fcap console · ${$('tab-' + name).textContent}`;
  if (context.connected) {
    await views[name].show(context);
  }
}

// --- start --------------------------------------------------------------------------------------------

function init() {
  $('api-key').value = apiKey();
  const params = new URLSearchParams(location.search);
  if (params.get('tenant')) {
    $('tenant').value = params.get('tenant');
  }
  $('connect').addEventListener('submit', (e) => {
    e.preventDefault();
    connect();
  });
  $('forget-key').addEventListener('click', () => {
    $('api-key').value = '';
    setApiKey('');
    connect();
  });
  $('alert-retry').addEventListener('click', () => (alertKind === 'forbidden' ? hideAlert() : connect()));
  for (const view of Object.values(views)) {
    view.init(context);
  }
  window.addEventListener('hashchange', () => {
    route();
    $('main').focus();
  });
  route();
  connect();
}

init();
