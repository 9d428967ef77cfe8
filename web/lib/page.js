// page.js - what the views share about the page itself: what was read once
// (benchmarks, devices), the render generation that stops a view's stale
// timers and fetches, the "ready" mark and the error boxes a test reads,
// and navigation.  app.js owns the routing: it hands render() to onRender,
// so that a view can navigate without importing app.js (no import cycle).

import { $, el } from "./dom.js";
import { api, ApiError } from "./api.js";

export const state = {
  benchmarks: null, // from /benchmarks
  runStatuses: [], // from /benchmarks too: the status filter's choices
  resultFields: null, // from /benchmarks too: the result-row fields
  devices: null, // from /devices
  generation: 0, // bumped on every render; stale timers and fetches stop
  timers: [],
};

export async function benchmarks() {
  if (!state.benchmarks) {
    const body = await api("/benchmarks");
    state.runStatuses = body.run_statuses || [];
    state.resultFields = body.result_fields || [];
    state.benchmarks = body.benchmarks;
  }
  return state.benchmarks;
}

export async function devices() {
  if (!state.devices) state.devices = await api("/devices");
  return state.devices;
}

export function later(fn, ms) {
  const gen = state.generation;
  state.timers.push(setTimeout(() => { if (gen === state.generation) fn(); }, ms));
}

export function current(gen) {
  return gen === state.generation;
}

export function ready() {
  document.documentElement.dataset.state = "ready";
}

// Tells a reader what is missing rather than leaving an empty box.
export function notice(id, ...content) {
  if ($("#" + id)) return;
  $("#notices").append(el("p", { id, class: "notice" }, ...content));
}

// Errors that escape: shown on the page (and counted on <html>, where a
// test reads them) instead of only in a console nobody opens.
export function pageError(msg) {
  const box = $("#page-errors");
  box.hidden = false;
  box.append(el("p", {}, "Page error: " + msg));
  const n = Number(document.documentElement.dataset.errors || 0) + 1;
  document.documentElement.dataset.errors = String(n);
}

export function errorBox(e) {
  return el("p", { class: "error", role: "alert" }, e instanceof ApiError && e.code ? e.code + ": " + e.message : String(e.message || e));
}

// One read for a view: its answer, or null (the error shown in out, the
// page marked ready) when it failed or the view has changed since.
export async function loadInto(path, out, gen) {
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

let renderView = () => {};

// app.js's render(moveFocus): draws the view the URL names.
export function onRender(fn) {
  renderView = fn;
}

export function render(moveFocus) {
  renderView(moveFocus);
}

export function navigate(url, replace) {
  history[replace ? "replaceState" : "pushState"](null, "", url);
  render(true);
}
