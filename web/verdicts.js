// The page's verdict views (issue 14): a run's verdicts on its page (its
// card's history and its fleet, the alerts it opened or settled, and the
// card's recent medians per row against the history's band), the fleet
// view (?view=fleet&benchmark=...) and the alerts list (?view=alerts) with
// acknowledgement.  Loaded after app.js, whose helpers (el, api, num, pct,
// chartFigure, ...) it uses; every verdict is in words, the colour and the
// point shape only help, and every chart has a table with its numbers.
"use strict";

const VERDICT_WORDS = { same: "same", faster: "faster", slower: "slower", inconclusive: "inconclusive" };

function signedPct(v, digits = 2) {
  return isNum(v) ? (v > 0 ? "+" : "") + pct(v, digits) : "–";
}

function runLink(id, text) {
  return id ? el("a", { class: "nav mono", href: "?run=" + encodeURIComponent(id) }, text || id.slice(-6)) : "–";
}

function shortCard(uuid) {
  return uuid ? uuid.replace(/^GPU-/, "").slice(0, 8) + "…" + uuid.slice(-4) : "?";
}

function rowKeyText(k) {
  return typeof k === "string" ? k : JSON.stringify(k);
}

function table(cls, caption, headers, body) {
  return el("div", { class: "table-wrap" }, el("table", { class: cls }, el("caption", {}, caption),
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, body)));
}

// A fleet cell's judgement in words: outlier, within, or not judged.
function fleetWords(cell) {
  if (cell.outlier) return { cls: "verdict-slower", text: isNum(cell.z) && cell.z < 0 ? "outlier (fast)" : "outlier" };
  if (isNum(cell.z)) return { cls: "verdict-same", text: "within the fleet" };
  return { cls: "note", text: "not judged" };
}

// One read for a view: its answer, or null (the error shown in out, the
// page marked ready) when it failed or the view has changed since.
async function loadInto(path, out, gen) {
  try {
    const body = await api(path);
    return current(gen) ? body : null;
  } catch (e) {
    if (current(gen)) {
      out.replaceChildren(errorBox(e));
      ready();
    }
    return null;
  }
}

// ---------------------------------------------------------------- a run's verdicts

// The panel under a finished run's rows; null for a run not finished.
function runVerdictsPanel(run) {
  if (run.status !== "done") return null;
  const box = el("section", { id: "run-verdicts", class: "verdicts-panel", "aria-labelledby": "run-verdicts-title" },
    el("h2", { id: "run-verdicts-title" }, "Verdicts"));
  const v = run.verdicts;
  if (!v) {
    box.append(el("p", { class: "note", id: "verdicts-none" }, "Not judged: only runs that end on this daemon are judged (an imported run, or one from before verdicts were kept, is not)."));
    return box;
  }
  if (!v.judged) {
    box.append(el("p", { class: "note", id: "verdicts-none" }, "Not judged: " + (v.reason || "this run judges nothing.")));
    return box;
  }
  if (v.confirms) box.append(el("p", { id: "verdicts-confirms" }, "This run was queued to confirm what run ", runLink(v.confirms), " found."));
  box.append(historyPart(run, v), fleetPart(v), el("div", { id: "run-alerts" }));
  return box;
}

function historyPart(run, v) {
  const part = el("div", { id: "verdicts-history" }, el("h3", {}, "Against this card's own history"));
  const h = v.history;
  if (!h) {
    part.append(el("p", { class: "note" }, "No history: this is the card's first valid run of this benchmark and these parameters."));
    return part;
  }
  part.append(el("p", { class: "verdict verdict-" + h.verdict, id: "history-verdict", dataset: { verdict: h.verdict } },
    el("strong", {}, "Verdict: " + VERDICT_WORDS[h.verdict]),
    h.verdict !== "same" && h.verdict_rows && h.verdict_rows.length ? " (rows " + h.verdict_rows.map(rowKeyText).join(", ") + ")" : "",
    ` — this run against the card's last ${h.runs.length} valid run(s), margin ±${pct(v.margin, 2)}.`));
  const body = h.rows.map((r) => el("tr", { dataset: { key: rowKeyText(r.key), verdict: r.verdict } },
    el("th", { scope: "row" }, rowKeyText(r.key)),
    el("td", { class: "verdict verdict-" + r.verdict, dataset: { field: "verdict", value: r.verdict } }, VERDICT_WORDS[r.verdict]),
    el("td", { class: "num", dataset: { field: "shift", value: String(r.shift) } }, signedPct(r.shift)),
    el("td", { class: "num" }, signedPct(r.ci_low) + " … " + signedPct(r.ci_high)),
    // in cycles where the clocks are known: a clock held down is slower in
    // time and the same in cycles
    el("td", { class: "num", dataset: { field: "cycles", value: r.cycles ? r.cycles.verdict : "" } },
      r.cycles ? `${signedPct(r.cycles.shift)} (${VERDICT_WORDS[r.cycles.verdict]})` : "clock unknown"),
    el("td", { class: "num" }, `${r.n_baseline} / ${r.n_candidate}`),
    el("td", { class: "num", dataset: { field: "more_samples", value: isNum(r.more_samples) ? String(r.more_samples) : "" } },
      isNum(r.more_samples) ? "≈" + r.more_samples + " a group" : "–")));
  part.append(table("verdicts history-verdicts", "Each row: this run's shift from its card's history (+ is slower), the 95% interval, the verdict in words, in cycles where the clocks are known, and for an inconclusive row roughly how many more samples a group would decide it",
    ["row", "Verdict", "Shift", "95% interval", "In cycles", "Samples (history / this run)", "More samples to decide"], body));
  const trend = el("div", { id: "card-history" }, el("p", { class: "note" }, "loading the card's recent runs…"));
  part.append(trend);
  later(() => cardHistory(run, h, v.margin, trend), 0);
  return part;
}

function median(xs) {
  const s = xs.filter(isNum).sort((a, b) => a - b);
  if (!s.length) return null;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

// The card's last valid runs (the history) and this one: each row's median
// as a share off the history's median, against the ±margin band.
async function cardHistory(run, h, margin, box) {
  const gen = state.generation;
  let past;
  try {
    past = await Promise.all(h.runs.map((id) => api("/runs/" + encodeURIComponent(id))));
  } catch (e) {
    if (current(gen)) box.replaceChildren(errorBox(e));
    return;
  }
  if (!current(gen)) return;
  past.sort((a, b) => (a.id < b.id ? -1 : 1));
  const all = past.concat([run]);
  const key = rowKey(run.results.rows);
  const keyOf = (r, i) => (key ? r[key] : i);
  const keys = run.results.rows.map(keyOf);
  const medianOf = (x, k) => {
    const rows = (x.results && x.results.rows) || [];
    const r = rows.find((row, i) => JSON.stringify(keyOf(row, i)) === JSON.stringify(k));
    return r && isNum(r.median_ms) ? r.median_ms : null;
  };
  const base = keys.map((k) => median(past.map((x) => medianOf(x, k))));
  const series = keys.map((k, j) => ({ label: (key || "row") + " " + rowKeyText(k),
    values: all.map((x) => { const m = medianOf(x, k); return isNum(m) && isNum(base[j]) ? m / base[j] - 1 : null; }) }));
  const labels = all.map((x, i) => (i === all.length - 1 ? "this run" : x.id.slice(-6)));
  const fig = chartFigure(`This card's medians per ${key || "row"} over its last ${past.length} valid run(s) and this one, as a share off the history's median, with the ±margin band`,
    (c) => GBCharts.history(c, labels, series, margin));
  const body = keys.map((k, j) => el("tr", { dataset: { key: rowKeyText(k) } },
    el("th", { scope: "row" }, rowKeyText(k)),
    el("td", { class: "num", dataset: { field: "history_median", value: String(base[j]) } }, num(base[j], 4)),
    all.map((x, i) => {
      const m = medianOf(x, k);
      return el("td", { class: "num", dataset: { field: i === all.length - 1 ? "this_run" : "run", value: String(m) }, title: x.id },
        num(m, 4), isNum(m) && isNum(base[j]) ? el("span", { class: "spread" }, " " + signedPct(m / base[j] - 1)) : null);
    })));
  const heads = [key || "row", "History median (ms)"].concat(all.map((x, i) => (i === all.length - 1 ? "This run" : el("span", {}, "Run ", runLink(x.id)))));
  box.replaceChildren(fig.fig, table("card-history", "Median time (ms) per row of each run, oldest first, and its share off the history's median; the band is ±" + pct(margin, 2), heads, body));
  fig.draw();
}

function fleetPart(v) {
  const f = v.fleet || { rows: [], cards: 0 };
  const part = el("div", { id: "verdicts-fleet" }, el("h3", {}, "Against the fleet"));
  const judged = f.rows.some((r) => isNum(r.z) || r.outlier);
  part.append(el("p", { id: "fleet-verdict", class: f.outlier_rows && f.outlier_rows.length ? "verdict verdict-slower" : "verdict verdict-same" },
    !judged ? `Not judged: ${f.cards} card(s) of this model and these parameters; at least 3 are needed.`
      : f.outlier_rows.length ? `Outlier among ${f.cards} cards in row(s) ${f.outlier_rows.map(rowKeyText).join(", ")}.`
        : `Within the fleet of ${f.cards} cards on every row.`));
  if (!f.rows.length) return part;
  const body = f.rows.map((r) => {
    const w = fleetWords(r);
    return el("tr", { dataset: { key: rowKeyText(r.key), outlier: String(!!r.outlier) } },
      el("th", { scope: "row" }, rowKeyText(r.key)),
      el("td", { class: "num", dataset: { field: "value_ms", value: String(r.value_ms) } }, num(r.value_ms, 4)),
      el("td", { class: "num" }, num(r.median_ms, 4)), el("td", { class: "num" }, num(r.mad_ms, 3)),
      el("td", { class: "num", dataset: { field: "z", value: String(r.z) } }, isNum(r.z) ? num(r.z, 3) : "–"),
      el("td", { class: w.cls, dataset: { field: "outlier", value: String(!!r.outlier) } }, w.text));
  });
  part.append(table("verdicts fleet-verdicts", "Each row: this card's median against the latest valid run of every other card of its model (robust z; an outlier past |z| > 3.5 and the margin)",
    ["row", "This card (ms)", "Fleet median (ms)", "MAD (ms)", "z", "Judgement"], body));
  return part;
}

// The alerts this run opened, confirmed or cleared: filled after the page.
async function runAlerts(run) {
  const gen = state.generation;
  const box = $("#run-alerts");
  if (!box) return;
  let list;
  try {
    list = (await api("/alerts")).alerts;
  } catch (e) {
    if (current(gen)) box.replaceChildren(errorBox(e));
    return;
  }
  if (!current(gen)) return;
  const mine = list.filter((a) => [a.runs.detected, a.runs.confirmed, a.runs.cleared].includes(run.id));
  if (!mine.length) {
    box.replaceChildren(el("p", { class: "note", id: "run-alerts-none" }, "No alert names this run."));
    return;
  }
  box.replaceChildren(el("h3", {}, "Alerts"), alertsTable(mine, run.id, false));
}

// ---------------------------------------------------------------- alerts

const ALERT_STATES = {
  detected: "detected (awaiting its confirming run)", confirmed: "confirmed",
  acknowledged: "acknowledged", cleared: "cleared",
};

function alertsTable(list, here, withAck) {
  const role = (a) => (a.runs.detected === here ? "found here" : a.runs.confirmed === here ? "confirmed here" : a.runs.cleared === here ? "cleared here" : "");
  const body = list.map((a) => el("tr", { id: "alert-" + a.id, dataset: { id: String(a.id), state: a.state, kind: a.kind } },
    el("th", { scope: "row" }, "#" + a.id, here ? el("span", { class: "why" }, " " + role(a)) : null),
    el("td", { class: "badge-cell" }, el("span", { class: "badge alert-" + a.state, dataset: { field: "state", value: a.state } }, ALERT_STATES[a.state] || a.state)),
    el("td", {}, a.kind === "fleet" ? "fleet outlier" : "slower than its history"),
    el("td", { title: a.card.device_uuid }, (a.card.device_name || "?") + " (" + shortCard(a.card.device_uuid) + ") @ " + a.card.host),
    el("td", {}, a.benchmark + " · row " + rowKeyText(a.row)),
    el("td", { class: "num" }, signedPct(a.shift), isNum(a.z) ? el("span", { class: "spread" }, " z " + num(a.z, 3)) : null),
    el("td", {}, "found by ", runLink(a.runs.detected),
      a.runs.confirmed ? [", confirmed by ", runLink(a.runs.confirmed)] : a.state === "detected" ? ", confirming run queued" : "",
      a.runs.cleared ? [", cleared by ", runLink(a.runs.cleared)] : ""),
    el("td", {}, a.reason || "–"),
    el("td", {}, timeEl(a.detected_at)),
    withAck ? el("td", {}, ackForm(a)) : null));
  const heads = ["Alert", "State", "Kind", "Card", "Benchmark and row", "Shift", "Runs", "Reason", "Detected (local time)"];
  if (withAck) heads.push("Acknowledge");
  return table("alerts", "Alerts, open ones first: the state and the runs in words", heads, body);
}

function ackForm(a) {
  if (a.state !== "detected" && a.state !== "confirmed") return "–";
  const id = "ack-reason-" + a.id;
  const input = el("input", { id, name: "reason", size: 18, required: true, autocomplete: "off" });
  const err = el("span", { class: "error", role: "alert", hidden: true });
  const form = el("form", { class: "ack", dataset: { id: String(a.id) } },
    el("label", { for: id, class: "visually-hidden" }, "Reason for acknowledging alert " + a.id), input, " ",
    el("button", { type: "submit" }, "Acknowledge"), err);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const reason = input.value.trim();
    if (!reason) {
      err.hidden = false;
      err.textContent = " Say why (the reason is kept with the alert).";
      input.setAttribute("aria-invalid", "true");
      input.focus();
      return;
    }
    try {
      await api("/alerts/" + a.id + "/ack", { method: "POST", body: { reason } });
      render(false);
    } catch (ex) {
      err.hidden = false;
      if (ex.status === 401 || ex.status === 403) {
        err.textContent = " Acknowledging needs the write token (as posting a run does).";
        tokenBar(sessionStorage.getItem(TOKEN_KEY) ? "The daemon refused this token for acknowledging." : "Acknowledging an alert needs the daemon's write token.");
      } else {
        err.textContent = " " + (ex.code ? ex.code + ": " : "") + ex.message;
      }
    }
  });
  return form;
}

async function showAlerts() {
  const gen = state.generation;
  const out = $("#alerts");
  const body = await loadInto("/alerts", out, gen);
  if (!body) return;
  const list = body.alerts;
  const open = list.filter((a) => a.state !== "cleared").length;
  out.replaceChildren(el("p", { id: "alerts-count" }, `${open} open alert(s), ${list.length - open} cleared.`),
    list.length ? alertsTable(list, null, true) : el("p", { class: "note" }, "No alerts."));
  ready();
}

// ---------------------------------------------------------------- the fleet

async function showFleet(q) {
  const gen = state.generation;
  const form = $("#fleet-form");
  const out = $("#fleet");
  try { await fillBenchmarkSelect(form.elements.benchmark, false); } catch (e) { out.replaceChildren(errorBox(e)); ready(); return; }
  const bench = q.get("benchmark") || form.elements.benchmark.options[0].value;
  form.elements.benchmark.value = bench;
  out.replaceChildren(el("p", { class: "note" }, "loading…"));
  const data = await loadInto("/fleet" + qs({ benchmark: bench }), out, gen);
  if (!data) return;
  if (!data.groups.length) {
    out.replaceChildren(el("p", { class: "note", id: "fleet-empty" }, "No valid run of " + bench + " yet."));
    ready();
    return;
  }
  const figs = [];
  out.replaceChildren(...data.groups.map((g, i) => fleetGroup(g, i, data, figs)));
  figs.forEach((f) => f.draw());
  ready();
}

function fleetGroup(g, gi, data, figs) {
  const params = Object.entries(g.key.params || {}).map(([k, v]) => k + "=" + (Array.isArray(v) ? v.join(",") : v)).join(" ");
  const keys = g.rows.map((r) => r.key);
  const outliers = g.cards.filter((c) => c.outlier).length;
  const parts = [el("h2", { id: "fleet-group-" + gi }, (g.key.card_model || "unknown model") + " ", el("span", { class: "sub mono small" }, params)),
    el("p", { class: outliers ? "verdict verdict-slower" : "verdict verdict-same", dataset: { outliers: String(outliers) } },
      `${g.cards.length} card(s); ${outliers ? outliers + " outlier(s), listed first" : "no outlier"}.`)];
  if (g.cards.length >= 3) {
    const fig = chartFigure(`Robust z of each card's median per row (${data.outlier_z} and −${data.outlier_z} dashed); outliers are labelled and drawn as triangles`,
      (c) => GBCharts.fleet(c, keys, g.cards.map((card) => ({ label: shortCard(card.device_uuid) + " @ " + card.host, outlier: card.outlier,
        z: keys.map((k) => { const cell = card.rows.find((r) => JSON.stringify(r.key) === JSON.stringify(k)); return cell && isNum(cell.z) ? cell.z : null; }) })), data.outlier_z));
    figs.push(fig);
    parts.push(fig.fig);
  } else {
    parts.push(el("p", { class: "note" }, "Fewer than 3 cards: nothing is judged (the median and MAD of two say nothing of which is off)."));
  }
  const head = ["Card", "Host", "Judgement"].concat(keys.map((k) => "row " + rowKeyText(k) + " (ms, z)"));
  const body = g.cards.map((card) => el("tr", { dataset: { uuid: card.device_uuid, outlier: String(card.outlier) }, class: card.outlier ? "bad" : "" },
    el("th", { scope: "row", title: card.device_uuid }, shortCard(card.device_uuid), " ", runLink(card.run_id, "run")),
    el("td", {}, card.host),
    el("td", { dataset: { field: "outlier", value: String(card.outlier) } }, card.outlier ? "outlier" : "within the fleet"),
    keys.map((k) => {
      const cell = card.rows.find((r) => JSON.stringify(r.key) === JSON.stringify(k));
      if (!cell) return el("td", { class: "num" }, "–");
      const w = fleetWords(cell);
      return el("td", { class: "num " + (cell.outlier ? "verdict-slower" : ""), dataset: { key: rowKeyText(k), z: String(cell.z), value: String(cell.value_ms) }, title: w.text },
        num(cell.value_ms, 4), el("span", { class: "spread" }, " z " + (isNum(cell.z) ? num(cell.z, 3) : "–")), cell.outlier ? " (outlier)" : "");
    })));
  parts.push(table("fleet-cards", "Each card's latest valid median per row and its z; outliers first", head, body));
  parts.push(table("fleet-rows", "The fleet per row: median and MAD (median absolute deviation) of the cards' medians",
    ["row", "Cards", "Median (ms)", "MAD (ms)"],
    g.rows.map((r) => el("tr", { dataset: { key: rowKeyText(r.key) } }, el("th", { scope: "row" }, rowKeyText(r.key)),
      el("td", { class: "num" }, String(r.cards)), el("td", { class: "num" }, num(r.median_ms, 4)), el("td", { class: "num" }, num(r.mad_ms, 3))))));
  return el("section", { class: "fleet-group", "aria-labelledby": "fleet-group-" + gi }, parts);
}

$("#fleet-form").addEventListener("submit", (e) => {
  e.preventDefault();
  navigate("/" + qs({ view: "fleet", benchmark: $("#fleet-form").elements.benchmark.value }), true);
});
$("#fleet-form").addEventListener("change", () => {
  navigate("/" + qs({ view: "fleet", benchmark: $("#fleet-form").elements.benchmark.value }), true);
});
