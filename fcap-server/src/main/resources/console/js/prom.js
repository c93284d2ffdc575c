// A parser for the Prometheus text exposition format (what GET /metrics returns), just enough for
// the live view: samples as {name, labels, value}; comments, HELP and TYPE lines are skipped.

/** Parses the exposition text into samples. Malformed lines are skipped, not fatal. */
export function parseMetrics(text) {
  const samples = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) {
      continue;
    }
    const sample = parseLine(line);
    if (sample) {
      samples.push(sample);
    }
  }
  return samples;
}

function parseLine(line) {
  let i = 0;
  while (i < line.length && /[A-Za-z0-9_:]/.test(line[i])) {
    i++;
  }
  const name = line.slice(0, i);
  if (!name) {
    return null;
  }
  const labels = {};
  if (line[i] === '{') {
    i++;
    while (i < line.length && line[i] !== '}') {
      const eq = line.indexOf('=', i);
      if (eq < 0 || line[eq + 1] !== '"') {
        return null;
      }
      const key = line.slice(i, eq).trim();
      let j = eq + 2;
      let value = '';
      while (j < line.length && line[j] !== '"') {
        if (line[j] === '\\' && j + 1 < line.length) {
          const next = line[j + 1];
          value += next === 'n' ? '\n' : next;
          j += 2;
        } else {
          value += line[j++];
        }
      }
      labels[key] = value;
      i = j + 1;
      if (line[i] === ',') {
        i++;
      }
    }
    i++;
  }
  const rest = line.slice(i).trim().split(/\s+/);
  const value = parseValue(rest[0]);
  return value === null ? null : { name, labels, value };
}

function parseValue(text) {
  if (text === undefined) {
    return null;
  }
  if (text === '+Inf') {
    return Infinity;
  }
  if (text === '-Inf') {
    return -Infinity;
  }
  const v = Number(text);
  return Number.isNaN(v) && text !== 'NaN' ? null : v;
}

/** Sum of the samples named `name` whose labels include every pair of `match`. */
export function sum(samples, name, match = {}) {
  let total = 0;
  for (const s of samples) {
    if (s.name === name && matches(s.labels, match)) {
      total += s.value;
    }
  }
  return total;
}

export function matches(labels, match) {
  for (const [k, v] of Object.entries(match)) {
    if (labels[k] !== v) {
      return false;
    }
  }
  return true;
}

/**
 * A quantile from the difference of two cumulative histograms (bucket upper bound -> count), as
 * Prometheus' histogram_quantile does: linear within the bucket. Null when nothing was observed.
 */
export function quantile(q, before, after) {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => Math.max(0, (after.get(b) || 0) - ((before && before.get(b)) || 0)));
  const total = counts[counts.length - 1] || 0;
  if (total <= 0) {
    return null;
  }
  const rank = q * total;
  let prevBound = 0;
  let prevCount = 0;
  for (let i = 0; i < bounds.length; i++) {
    if (counts[i] >= rank) {
      if (bounds[i] === Infinity) {
        return prevBound;
      }
      const inBucket = counts[i] - prevCount;
      return inBucket <= 0 ? bounds[i] : prevBound + (bounds[i] - prevBound) * ((rank - prevCount) / inBucket);
    }
    prevBound = bounds[i];
    prevCount = counts[i];
  }
  return prevBound;
}

/** The cumulative buckets of histogram `name` (e.g. fcap_store_seconds), summed over matching series. */
export function buckets(samples, name, match = {}) {
  const out = new Map();
  for (const s of samples) {
    if (s.name === name + '_bucket' && matches(s.labels, match)) {
      const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le);
      out.set(le, (out.get(le) || 0) + s.value);
    }
  }
  return out;
}
