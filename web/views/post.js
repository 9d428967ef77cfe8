// post.js - the form to post a run (?view=post): one input per parameter
// from the daemon's own description of its benchmarks, the GPUs of this
// node, and each refusal shown on the field it names.

import { $, $$, el } from "../lib/dom.js";
import { api, TOKEN_KEY } from "../lib/api.js";
import { isNum, qs } from "../lib/format.js";
import { state, benchmarks, devices, current, ready, errorBox, navigate } from "../lib/page.js";
import { seeRealData } from "../lib/widgets.js";

export async function showPost(q) {
  const gen = state.generation;
  const form = $("#post-form");
  const sel = form.elements.benchmark;
  let list;
  try {
    list = await benchmarks();
  } catch (e) {
    $("#post-params").replaceChildren(errorBox(e));
    ready();
    return;
  }
  if (!current(gen)) return;
  if (!sel.options.length) for (const b of list) sel.append(el("option", { value: b.name }, b.name));
  const want = q.get("benchmark");
  if (want && list.some((b) => b.name === want)) sel.value = want;
  buildParams(list.find((b) => b.name === sel.value));
  form.elements.token.value = sessionStorage.getItem(TOKEN_KEY) || "";
  $("#post-error").hidden = true;
  await showDevicesForPost();
  ready();
}

async function showDevicesForPost() {
  const box = $("#devices");
  const sel = $("#post-device");
  let d;
  try {
    state.devices = null; // fresh: worker state and queue depth change
    d = await devices();
  } catch (e) {
    box.replaceChildren(errorBox(e));
    return;
  }
  const keep = sel.value;
  sel.replaceChildren(...[el("option", { value: "" }, "the first free GPU (daemon's choice)"),
    d.devices.length > 1 ? el("option", { value: "all" }, `every GPU (${d.devices.length} runs)`) : null,
    ...d.devices.map((g) => el("option", { value: String(g.index) }, `#${g.index} ${g.name}`))].filter(Boolean));
  if (keep && $$("option", sel).some((o) => o.value === keep)) sel.value = keep;
  if (d.host) $("#node").textContent = "node " + d.host;
  // No GPU: said at the top of the form, and no button that can only fail.
  const noGpu = $("#post-no-gpu");
  noGpu.hidden = d.devices.length > 0;
  $("#post-submit").hidden = !noGpu.hidden;
  if (!d.devices.length) {
    noGpu.replaceChildren(el("strong", {}, "No GPU on this node: "), (d.reason || "no reason given") + ". A run posted here would be refused, so this form has no button; the parameters below are still the API's.", seeRealData());
    box.replaceChildren(el("p", { class: "warn" }, "No GPU on this node: " + (d.reason || "no reason given") + "."));
    return;
  }
  box.replaceChildren(el("div", { class: "table-wrap" }, el("table", {},
    el("thead", {}, el("tr", {}, ["#", "Card", "UUID", "Worker", "Queued"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", {}, d.devices.map((g) => el("tr", {},
      el("td", { class: "num" }, String(g.index)),
      el("td", {}, g.name, g.synthetic ? el("span", { class: "tag" }, "test double") : null),
      el("td", { class: "mono small" }, g.uuid),
      el("td", {}, g.worker ? g.worker.state + (g.worker.healthy === false ? " (unhealthy)" : "") : "–"),
      el("td", { class: "num" }, isNum(g.queue_depth) ? String(g.queue_depth) : "–")))))));
}

// One input per parameter, from the daemon's own description of it, so the
// form never disagrees with the API about names, defaults or bounds.
function buildParams(bench) {
  const box = $("#post-params");
  $("#post-benchmark-help").textContent = bench ? bench.description : "";
  const inputs = (bench ? bench.params : []).map((p) => {
    const id = "param-" + p.name;
    const helpId = id + "-help";
    const bounds = [];
    if (p.min !== undefined) bounds.push("≥ " + p.min);
    if (p.max !== undefined) bounds.push("≤ " + p.max);
    if (p.multiple_of) bounds.push("a multiple of " + p.multiple_of);
    if (p.power_of_two) bounds.push("0 or a power of two");
    if (p.min_items !== undefined) bounds.push(p.min_items === p.max_items ? `exactly ${p.min_items} items` : `${p.min_items}–${p.max_items} items`);
    const help = el("p", { class: "help", id: helpId }, p.help || "", bounds.length ? " (" + bounds.join(", ") + ")" : "");
    let control;
    if (Array.isArray(p.choices) && p.type.startsWith("array")) {
      const def = new Set(p.default || []);
      control = el("fieldset", { class: "choices", dataset: { param: p.name, kind: "choices" }, "aria-describedby": helpId },
        el("legend", {}, p.name),
        p.choices.map((c) => el("label", {}, el("input", { type: "checkbox", value: c, checked: def.has(c) }), " " + c)));
      return el("div", { class: "field" }, control, help);
    }
    if (p.type.startsWith("array")) {
      control = el("input", { id, dataset: { param: p.name, kind: p.type.includes("string") ? "strings" : "numbers" }, value: (p.default || []).join(", "), "aria-describedby": helpId, autocomplete: "off", spellcheck: "false", class: "wide" });
    } else if (p.type === "integer" || p.type === "number") {
      control = el("input", { id, type: "number", dataset: { param: p.name, kind: p.type }, value: p.default, min: p.min, max: p.max, step: p.type === "integer" ? p.multiple_of || 1 : "any", "aria-describedby": helpId });
    } else if (Array.isArray(p.choices)) {
      control = el("select", { id, dataset: { param: p.name, kind: "string" }, "aria-describedby": helpId }, p.choices.map((c) => el("option", { value: c, selected: c === p.default }, c)));
    } else {
      control = el("input", { id, dataset: { param: p.name, kind: "string" }, value: p.default ?? "", "aria-describedby": helpId });
    }
    return el("div", { class: "field" }, el("label", { for: id }, p.name), control, help);
  });
  box.replaceChildren(el("legend", {}, "Parameters (defaults from the daemon)"), ...inputs);
}

// Reads the form into the POST body; a value that cannot be read is
// reported on its field before anything is sent.
function readParams() {
  const params = {};
  for (const c of $$("[data-param]", $("#post-params"))) {
    const name = c.dataset.param;
    const kind = c.dataset.kind;
    if (kind === "choices") {
      params[name] = $$("input:checked", c).map((i) => i.value);
    } else if (kind === "numbers") {
      const parts = c.value.split(/[\s,]+/).filter(Boolean);
      const vals = parts.map(Number);
      const bad = parts.findIndex((s, i) => !Number.isFinite(vals[i]));
      if (bad >= 0) throw Object.assign(new Error(`"${parts[bad]}" is not a number`), { field: "params." + name });
      params[name] = vals;
    } else if (kind === "strings") {
      params[name] = c.value.split(/[\s,]+/).filter(Boolean);
    } else if (kind === "integer" || kind === "number") {
      if (c.value.trim() === "") continue; // the daemon's default
      const v = Number(c.value);
      if (!Number.isFinite(v)) throw Object.assign(new Error("not a number"), { field: "params." + name });
      params[name] = v;
    } else if (c.value !== "") {
      params[name] = c.value;
    }
  }
  return params;
}

function markField(field, message) {
  for (const x of $$("[aria-invalid]", $("#post-form"))) x.removeAttribute("aria-invalid");
  const box = $("#post-error");
  box.hidden = false;
  box.textContent = message;
  if (!field) return;
  // "params.strides[3]" → the strides input; "label" → the label input.
  const m = /^params\.([A-Za-z0-9_]+)/.exec(field);
  const target = m ? $(`[data-param="${m[1]}"]`) : $(`#post-form [name="${field.replace(/\[.*$/, "")}"]`);
  if (target) {
    target.setAttribute("aria-invalid", "true");
    (target.matches("fieldset") ? $("input", target) : target).focus();
  }
}

export function askToken(message) {
  if (new URLSearchParams(location.search).get("view") !== "post") navigate("/?view=post");
  const t = $("#post-token");
  t.setAttribute("aria-invalid", "true");
  const box = $("#post-error");
  box.hidden = false;
  box.textContent = message + " Enter it below; it is kept for this tab only.";
  t.focus();
}

// The form's listeners; app.js calls this once.
export function initPost() {
  $("#post-benchmark").addEventListener("change", () => {
    navigate("/" + qs({ view: "post", benchmark: $("#post-benchmark").value }), true);
  });

  $("#post-token").addEventListener("change", (e) => {
    const v = e.target.value.trim();
    if (v) sessionStorage.setItem(TOKEN_KEY, v); else sessionStorage.removeItem(TOKEN_KEY);
  });

  $("#post-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.target;
    const token = form.elements.token.value.trim();
    if (token) sessionStorage.setItem(TOKEN_KEY, token); else sessionStorage.removeItem(TOKEN_KEY);
    const body = { benchmark: form.elements.benchmark.value };
    try {
      body.params = readParams();
    } catch (err) {
      markField(err.field, err.message);
      return;
    }
    const dev = form.elements.device.value;
    if (dev === "all") body.device = "all"; else if (dev !== "") body.device = Number(dev);
    const label = form.elements.label.value.trim();
    if (label) body.label = label;
    if (form.elements.timeout_s.value) body.timeout_s = Number(form.elements.timeout_s.value);
    const button = $("#post-submit");
    if (button.hidden) return; // no GPU here: see showDevicesForPost
    button.disabled = true;
    try {
      const r = await api("/runs", { method: "POST", body });
      // "device": "all" answers with a batch of runs; one run answers itself.
      if (r.batch && Array.isArray(r.runs)) navigate("/?batch=" + encodeURIComponent(r.batch));
      else navigate("/?run=" + encodeURIComponent(r.id));
    } catch (err) {
      if (err.status === 401) askToken(sessionStorage.getItem(TOKEN_KEY) ? "The daemon refused this token." : "This daemon needs a bearer token to post runs.");
      else markField(err.field, (err.code ? err.code + ": " : "") + err.message);
    } finally {
      button.disabled = false;
    }
  });
}
