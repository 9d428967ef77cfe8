// format.js - numbers, times and query strings as the page shows them.
// Pure functions of their arguments: no DOM, no state.

export function isNum(v) {
  return typeof v === "number" && Number.isFinite(v);
}

// Significant digits, without exponent noise for everyday magnitudes.
export function num(v, digits = 4) {
  if (!isNum(v)) return "–";
  if (Number.isInteger(v) && Math.abs(v) < 1e15) return v.toLocaleString("en-US");
  const a = Math.abs(v);
  if (a !== 0 && (a < 1e-3 || a >= 1e9)) return v.toExponential(digits - 1);
  return Number(v.toPrecision(digits)).toLocaleString("en-US", { maximumFractionDigits: 6 });
}

export function pct(v, digits = 3) {
  return isNum(v) ? num(v * 100, digits) + " %" : "–";
}

export function signedPct(v, digits = 2) {
  return isNum(v) ? (v > 0 ? "+" : "") + pct(v, digits) : "–";
}

export function localTime(iso) {
  if (!iso) return "–";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const p = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

export function duration(a, b) {
  if (!a || !b) return null;
  const s = (new Date(b) - new Date(a)) / 1000;
  if (!isNum(s)) return null;
  return s < 1 ? num(s * 1000, 3) + " ms" : s < 120 ? num(s, 3) + " s" : num(s / 60, 3) + " min";
}

export function qs(obj) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(obj)) if (v !== undefined && v !== null && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? "?" + s : "";
}

// A card's UUID shortened to what tells two cards of one model apart
// (the runs list and the compare page say it the same way).
export function uuidTag(uuid) {
  return uuid.replace(/^GPU-/, "").slice(0, 8) + "…" + uuid.slice(-4);
}

// uuidTag, or "?" for a card without one (the verdict views).
export function shortCard(uuid) {
  return uuid ? uuidTag(uuid) : "?";
}

// The row key of a benchmark's rows ("stride" or "variant").
export function rowKey(rows) {
  for (const k of ["stride", "variant", "pattern", "key", "label"]) if (rows.some((r) => k in r)) return k;
  return null;
}

export function rowKeyText(k) {
  return typeof k === "string" ? k : JSON.stringify(k);
}

// (max - min) / median, as the worker reports it; computed where absent.
export function spreadOf(r) {
  if (isNum(r.spread)) return r.spread;
  if (isNum(r.max_ms) && isNum(r.min_ms) && isNum(r.median_ms) && r.median_ms > 0) return (r.max_ms - r.min_ms) / r.median_ms;
  return null;
}

export function median(xs) {
  const s = xs.filter(isNum).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// The result-row fields come from GET /benchmarks (the server's one table,
// common/result_fields.c): a row table's columns, a compare menu's metrics
// and how each value is shown follow from a field's type, unit and digits.
export function fieldShow(f) {
  const d = f.digits || undefined;
  if (f.type === "string") return (v) => (typeof v === "string" && v ? v : "–");
  if (f.type === "boolean") return (v) => (v === true ? "yes" : v === false ? "NO" : "–");
  if (f.type === "number[]") return (v) => (Array.isArray(v) ? String(v.length) : "–");
  if (f.unit === "x") return (v) => (isNum(v) ? num(v, d) + "×" : "–");
  if (f.unit === "share") return (v) => pct(v, d);
  return (v) => num(v, d);
}

// The units of work one sample of row held in run, as GET /benchmarks'
// work_unit says to find them (the server's gb_work_units): comparisons
// across runs divide a row's times by it, since the calibration may pick
// other work on another run of the same card.
export function workUnits(benchmarks, run, row) {
  const b = (benchmarks || []).find((x) => x.name === run.benchmark);
  const w = b && b.work_unit;
  if (!w || w.per_unit) return 1;
  if (w.row_field && isNum(row[w.row_field]) && row[w.row_field] >= 1) return row[w.row_field];
  const summary = (run.results && run.results.summary) || {};
  const n = w.summary_object && summary[w.summary_object] ? summary[w.summary_object][w.summary_field] : null;
  return isNum(n) && n >= 1 ? n : 1;
}

// The unit of work benchmark's times are compared per ("iteration", ...).
export function workUnitName(benchmarks, benchmark) {
  const b = (benchmarks || []).find((x) => x.name === benchmark);
  return (b && b.work_unit && b.work_unit.unit) || "sample";
}
