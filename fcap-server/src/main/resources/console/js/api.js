// The console's only way to the server: the public HTTP API, with the operator's API key.
//
// Every call resolves to the parsed JSON body or rejects with an ApiError (the server's
// {"error": {code, message, field, errors}}, plus the HTTP status) or, when the server cannot be
// reached at all, with an ApiError of status 0 and code "unreachable". Listeners registered with
// onTrouble() hear about 401/403/unreachable/5xx so the page can show one clear banner; a 501 (a
// feature this server's store lacks) is no failure of the server, and the view that asked says so.

const KEY_STORAGE = 'fcap.apiKey';

export class ApiError extends Error {
  constructor(status, code, message, field, errors) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field || null;
    this.errors = errors || [];
  }
}

const listeners = new Set();

export function onTrouble(listener) {
  listeners.add(listener);
}

function notify(kind, error) {
  for (const l of listeners) {
    l(kind, error);
  }
}

/** The API key typed by the operator; kept in sessionStorage (this tab only). Empty: no key. */
export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE) || '';
}

export function setApiKey(key) {
  if (key) {
    sessionStorage.setItem(KEY_STORAGE, key);
  } else {
    sessionStorage.removeItem(KEY_STORAGE);
  }
}

/**
 * One request. `options`: body (an object, sent as JSON), headers, text (true: return the body as
 * text, for /metrics), etag (true: resolve to {body, etag}).
 */
export async function request(method, path, options = {}) {
  const headers = { Accept: options.text ? 'text/plain' : 'application/json', ...(options.headers || {}) };
  const key = apiKey();
  if (key) {
    headers.Authorization = 'Bearer ' + key;
  }
  let body;
  if (options.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  let response;
  try {
    response = await fetch(path, { method, headers, body, cache: 'no-store', credentials: 'omit' });
  } catch (e) {
    const error = new ApiError(0, 'unreachable',
      `Cannot reach the fcap server at ${location.origin}: it is down or the network is unreachable.`);
    notify('unreachable', error);
    throw error;
  }
  const type = response.headers.get('content-type') || '';
  const payload = type.includes('json') ? await response.json().catch(() => null) : await response.text();
  if (!response.ok) {
    const e = payload && payload.error ? payload.error : {};
    const error = new ApiError(response.status, e.code || 'http_' + response.status,
      e.message || `HTTP ${response.status} ${response.statusText}`, e.field, e.errors);
    if (response.status === 401 || response.status === 403) {
      notify(response.status === 401 ? 'unauthenticated' : 'forbidden', error);
    } else if (response.status >= 500 && response.status !== 501) {
      notify('server', error);
    }
    throw error;
  }
  notify('ok', null);
  return options.etag ? { body: payload, etag: response.headers.get('etag') } : payload;
}

/** The ApiError of a failed XMLHttpRequest, heard by the same listeners as request()'s. */
function uploadError(xhr) {
  if (xhr.status === 0) {
    const error = new ApiError(0, 'unreachable', `The upload to the fcap server at ${location.origin} was cut off: `
      + 'the server is down, the network failed, or the server refused the request before reading it.');
    notify('unreachable', error);
    return error;
  }
  let e = {};
  try {
    const payload = JSON.parse(xhr.responseText);
    e = payload && payload.error ? payload.error : {};
  } catch (ignored) {
    // not JSON: the status says what went wrong
  }
  const error = new ApiError(xhr.status, e.code || 'http_' + xhr.status,
    e.message || `HTTP ${xhr.status} ${xhr.statusText}`, e.field, e.errors);
  if (xhr.status === 401 || xhr.status === 403) {
    notify(xhr.status === 401 ? 'unauthenticated' : 'forbidden', error);
  } else if (xhr.status >= 500 && xhr.status !== 501) {
    notify('server', error);
  }
  return error;
}

/**
 * Sends a file as the body of a POST, streamed by the browser, and resolves to the parsed JSON
 * answer. XMLHttpRequest, not fetch: only it reports upload progress. `onProgress(sent, total)` is
 * called as the body goes out; `onSent()` once all of it is out and the server is still answering.
 */
export function upload(path, file, contentType, onProgress, onSent) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.setRequestHeader('Accept', 'application/json');
    xhr.setRequestHeader('Content-Type', contentType);
    const key = apiKey();
    if (key) {
      xhr.setRequestHeader('Authorization', 'Bearer ' + key);
    }
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.upload.onload = () => onSent();
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        notify('ok', null);
        try {
          resolve(JSON.parse(xhr.responseText));
        } catch (e) {
          reject(new ApiError(xhr.status, 'invalid_answer', 'The server answered the import with something that '
            + 'is not JSON.'));
        }
      } else {
        reject(uploadError(xhr));
      }
    };
    xhr.onerror = () => reject(uploadError(xhr));
    xhr.onabort = () => reject(new ApiError(0, 'aborted', 'The upload was cancelled.'));
    xhr.send(file);
  });
}

const q = (tenant) => '?tenant=' + encodeURIComponent(tenant);
const ifMatch = (version) => (version === undefined || version === null ? {} : { 'If-Match': '"' + version + '"' });

export const api = {
  policy: (tenant) => request('GET', '/v1/rules' + q(tenant)),
  history: (tenant) => request('GET', '/v1/rules/history' + q(tenant)),
  validate: (tenant, rules) => request('POST', '/v1/rules/validate' + q(tenant), { body: { rules } }),
  addRule: (tenant, rule, version) =>
    request('POST', '/v1/rules' + q(tenant), { body: rule, headers: ifMatch(version) }),
  putRule: (tenant, id, rule, version) =>
    request('PUT', '/v1/rules/' + encodeURIComponent(id) + q(tenant), { body: rule, headers: ifMatch(version) }),
  deleteRule: (tenant, id, version) =>
    request('DELETE', '/v1/rules/' + encodeURIComponent(id) + q(tenant), { headers: ifMatch(version) }),
  inspect: (tenant, recipient, timeZone) => request('GET', '/v1/recipients/' + encodeURIComponent(recipient) + q(tenant)
    + (timeZone ? '&timeZone=' + encodeURIComponent(timeZone) : '')),
  putPolicy: (tenant, policy, version) =>
    request('PUT', '/v1/rules' + q(tenant), { body: policy, headers: ifMatch(version) }),
  reset: (tenant, recipient) => request('DELETE', '/v1/recipients/' + encodeURIComponent(recipient) + q(tenant)),
  decide: (message) => request('POST', '/v1/decisions', { body: message }),
  metrics: () => request('GET', '/metrics', { text: true }),
  suppression: (tenant, recipient) => request('GET', suppressionPath(recipient) + q(tenant)),
  suppressions: (tenant, cursor, limit) => request('GET', '/v1/suppressions' + q(tenant)
    + (cursor ? '&cursor=' + encodeURIComponent(cursor) : '') + '&limit=' + limit),
  suppress: (tenant, recipient, entry) => request('PUT', suppressionPath(recipient) + q(tenant), { body: entry }),
  unsuppress: (tenant, recipient) => request('DELETE', suppressionPath(recipient) + q(tenant)),
  importSuppressions: (tenant, file, contentType, onProgress, onSent) =>
    upload('/v1/suppressions/import' + q(tenant), file, contentType, onProgress, onSent),
};

function suppressionPath(recipient) {
  return '/v1/suppressions/' + encodeURIComponent(recipient);
}
