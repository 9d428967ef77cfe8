// dom.js - building and finding elements, for every view of the page.
// el() sets attributes only, never a "style" string, which the page's
// Content-Security-Policy forbids (a view that shades a cell sets
// element.style through the CSSOM instead).

export const $ = (sel, root) => (root || document).querySelector(sel);
export const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

// Builds an element.  Attributes only; never a "style" string, which the
// Content-Security-Policy forbids.
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "dataset") Object.assign(e.dataset, v);
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// A captioned table in its scrolling wrapper.
export function table(cls, caption, headers, body) {
  return el("div", { class: "table-wrap" }, el("table", { class: cls }, el("caption", {}, caption),
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", { scope: "col" }, h)))), el("tbody", {}, body)));
}

// Text that may break after its commas (<wbr>), so a long list wraps in a
// narrow column between numbers, never inside one.
export function breakAtCommas(text) {
  return text.split(",").flatMap((part, i) => (i ? [",", el("wbr"), part] : [part]));
}
