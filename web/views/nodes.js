// nodes.js - the nodes view (?view=nodes&state=S&label=NAME:VALUE...): every
// peer this hub pulls from, its state, labels, last success, runs pulled,
// last error and newest run, with the counts by state on top.
// A lab's hub follows up to thousands of nodes, so this is one
// table with no chart or request per node, and the filters work on the one
// GET /peers answer in the page: the label choices come from the peers
// themselves, the counts on top stay the whole fleet's while a filter
// narrows the table, and a daemon that filters nothing (one from before
// labels and states) is read the same way.  The URL keeps the filters
// (state once, label repeatable, all must match) so a link shows a
// colleague the same failing rack.
// Older daemons answer GET /peers without state, labels, counts,
// next_pull_at or newest_run: the state is then told from the pull's own
// fields and the rest shows as "–".

import { $, el, table } from "../lib/dom.js";
import { num } from "../lib/format.js";
import { state, ready, loadInto, navigate } from "../lib/page.js";
import { timeEl, runLink } from "../lib/widgets.js";

// The contract's states, in the order the counts show them, and what each
// means (the badge's title).
const STATES = {
  failing: "the last pull failed; the next waits longer (back-off)",
  pulling: "a transfer is in flight",
  new: "not pulled yet",
  ok: "the last pull succeeded",
};

// A peer's state: the daemon's, or where it gives none, what its last
// pull says.
export function peerState(p) {
  if (typeof p.state === "string" && p.state) return p.state;
  if (p.failures_in_row > 0) return "failing";
  return p.last_success_at ? "ok" : "new";
}

function labelsOf(p) {
  return p.labels && typeof p.labels === "object" ? p.labels : {};
}

// "rack:r1" must match that label's value exactly; "rack" alone any peer
// with that label.
function parseLabel(text) {
  const i = text.indexOf(":");
  return i < 0 ? { name: text, value: null } : { name: text.slice(0, i), value: text.slice(i + 1) };
}

function matches(p, st, labels) {
  if (st && peerState(p) !== st) return false;
  const have = labelsOf(p);
  return labels.every(({ name, value }) => name in have && (value === null || have[name] === value));
}

// The view's URL for these filters (label repeated, in the order given).
function nodesUrl(st, labels) {
  const q = new URLSearchParams({ view: "nodes" });
  if (st) q.set("state", st);
  for (const l of labels) q.append("label", l);
  return "/?" + q.toString();
}

function stateBadge(s) {
  return el("span", { class: "badge peer-" + s, dataset: { field: "state", value: s }, title: STATES[s] }, s);
}

// The counts by state, each a link to the peers in that state.
function countsLine(counts, total, labels) {
  const parts = Object.keys(STATES).map((s) =>
    el("a", { class: "nav peer-count", href: nodesUrl(s, labels), dataset: { state: s, count: String(counts[s] || 0) } },
      num(counts[s] || 0), " ", s));
  return el("p", { id: "nodes-counts", dataset: { total: String(total) } }, num(total), " peer(s): ",
    parts.flatMap((a, i) => (i ? [", ", a] : [a])), ".");
}

function peersFileLine(f) {
  if (!f) return null;
  return el("p", { id: "nodes-peers-file", class: f.error ? "error" : "note" }, "Peers file ", el("code", {}, f.path || "?"),
    f.loaded_at ? [", read ", timeEl(f.loaded_at)] : "", typeof f.targets === "number" ? ", " + num(f.targets) + " target(s)" : "",
    f.error ? [". The last read was refused, so the last good list is kept: ", f.error] : "", ".");
}

function lastError(p) {
  if (!p.last_error) return "–";
  return [el("span", { class: "peer-error" }, p.last_error), el("br"),
    el("span", { class: "note small" }, p.last_error_at ? ["at ", timeEl(p.last_error_at), ", "] : "",
      num(p.failures_in_row || 0), " failure(s) in a row", p.next_pull_at ? [", next try ", timeEl(p.next_pull_at)] : "")];
}

function peerRow(p, st, labels) {
  const s = peerState(p);
  const have = labelsOf(p);
  const tags = Object.keys(have).sort().map((k) => {
    const l = k + ":" + have[k];
    return el("a", { class: "nav tag peer-label", href: nodesUrl(st, labels.includes(l) ? labels : labels.concat([l])), title: "only the peers labelled " + l }, l);
  });
  const skipped = p.skipped && p.skipped.count ? el("span", { class: "note small", title: p.skipped.last_reason || "" }, " (", num(p.skipped.count), " skipped)") : null;
  const newest = p.newest_run && p.newest_run.id ? [runLink(p.newest_run.id), " ", timeEl(p.newest_run.finished_at)] : "–";
  return el("tr", { dataset: { url: p.url, state: s } },
    el("th", { scope: "row", class: "mono peer-url" }, p.url, p.source === "file" ? el("span", { class: "tag", title: "from the peers file" }, "file") : null),
    el("td", { class: "badge-cell" }, stateBadge(s)),
    el("td", { class: "peer-labels" }, tags.length ? tags : "–"),
    el("td", {}, p.last_success_at ? timeEl(p.last_success_at) : "never"),
    el("td", { class: "num", dataset: { field: "runs_pulled", value: String(p.runs_pulled) } }, num(p.runs_pulled), skipped),
    el("td", { class: "peer-last-error" }, lastError(p)),
    el("td", {}, newest));
}

export async function showNodes(q) {
  const gen = state.generation;
  const out = $("#nodes");
  const form = $("#nodes-form");
  const st = q.get("state") || "";
  const labels = q.getAll("label").filter((l) => l);
  form.elements.state.value = st in STATES ? st : "";
  form.elements.label.value = labels.join(" ");
  const data = await loadInto("/peers", out, gen);
  if (!data) return;
  const peers = Array.isArray(data.peers) ? data.peers : [];
  const counts = {};
  for (const p of peers) counts[peerState(p)] = (counts[peerState(p)] || 0) + 1;
  // The daemon's counts where it gives them (the same peers, counted as it
  // saw them); the page's own otherwise.
  const shownCounts = data.counts && typeof data.counts === "object" ? data.counts : counts;
  const wanted = labels.map(parseLabel);
  const list = peers.filter((p) => matches(p, st, wanted));
  // The label menu: every NAME:VALUE the peers carry.
  const choices = new Set();
  for (const p of peers) for (const [k, v] of Object.entries(labelsOf(p))) choices.add(k + ":" + v);
  $("#nodes-labels").replaceChildren(...Array.from(choices).sort().map((c) => el("option", { value: c })));
  const parts = [countsLine(shownCounts, typeof data.total === "number" ? data.total : peers.length, labels), peersFileLine(data.peers_file)];
  if (!peers.length) {
    parts.push(el("p", { class: "note", id: "nodes-empty" }, "This node pulls from no peer: start it with ", el("code", {}, "--peer URL"),
      " or ", el("code", {}, "--peers-file PATH"), " (README, A fleet)."));
  } else {
    const filtered = st || labels.length;
    parts.push(el("p", { id: "nodes-shown", class: "note", dataset: { shown: String(list.length) } },
      filtered ? `${num(list.length)} of ${num(peers.length)} peer(s) match the filters. ` : "", filtered ? el("a", { class: "nav", href: nodesUrl("", []) }, "Show all") : ""));
    parts.push(table("nodes", "The peers in URL order: their state, labels and last pull", ["Peer", "State", "Labels", "Last success (local time)", "Runs pulled", "Last error", "Newest run"],
      list.map((p) => peerRow(p, st, labels))));
  }
  out.replaceChildren(...parts.filter((x) => x));
  ready();
}

// The filter form's listeners; app.js calls this once.  Labels are typed
// space-separated (NAME:VALUE NAME:VALUE) and all must match.
export function initNodes() {
  const form = $("#nodes-form");
  const go = (e) => {
    e.preventDefault();
    navigate(nodesUrl(form.elements.state.value, form.elements.label.value.split(/\s+/).filter((l) => l)), true);
  };
  form.addEventListener("submit", go);
  form.elements.state.addEventListener("change", go);
}
