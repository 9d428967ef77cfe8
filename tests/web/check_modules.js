// check_modules.js - the page's scripts as ES modules (issue 25): every
// script of web/index.html but Chart.js is <script type="module">, every
// .js under web/ parses as a module and is imported from app.js, each
// import names a file of web/ and a name that file exports and is used,
// and no module uses a global it did not import: only the ECMAScript built-ins, the
// browser's own (BROWSER below) and window.Chart through `window`.
//
// Usage: node --expose-internals check_modules.js WEB_DIR.  The parser is
// acorn: a system one (Debian's node-acorn) or the copy inside node, which
// --expose-internals reaches; exits 77 (skipped) where neither loads.
// Names are checked per file, not per scope: a name bound anywhere in a
// file counts as declared in all of it (cheap, and enough to catch a name
// that only another file declares, which is what the split can break).
"use strict";

const fs = require("fs");
const path = require("path");
const vm = require("vm");

function load(names) {
  for (const n of names) {
    try { return require(n); } catch (_) { /* next */ }
  }
  return null;
}
const acorn = load(["acorn", "internal/deps/acorn/acorn/dist/acorn"]);
const walk = load(["acorn-walk", "internal/deps/acorn/acorn-walk/dist/walk"]);
if (!acorn || !walk) {
  console.log("SKIPPED: no acorn parser (install node-acorn, or run node with --expose-internals)");
  process.exit(77);
}

const BROWSER = new Set(["window", "document", "location", "history", "navigator", "sessionStorage",
  "fetch", "URL", "URLSearchParams", "setTimeout", "clearTimeout", "getComputedStyle", "Node",
  "console"]);
const BUILTINS = new Set(vm.runInNewContext("Object.getOwnPropertyNames(globalThis)"));

const web = path.resolve(process.argv[2] || "web");
const problems = [];
const fail = (msg) => problems.push(msg);

// index.html: Chart.js the one classic script, the page's own all modules.
const html = fs.readFileSync(path.join(web, "index.html"), "utf8");
const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
if (!scripts.length) fail("index.html: no <script>");
for (const [, attrs, inline] of scripts) {
  const src = (/\bsrc="([^"]*)"/.exec(attrs) || [])[1];
  const module = /\btype="module"/.test(attrs);
  if (!src || inline.trim()) fail("index.html: an inline script (the CSP refuses it): <script" + attrs + ">");
  else if (src === "/vendor/chart.js") { if (module) fail("index.html: Chart.js is a classic script, not a module"); }
  else if (!module) fail("index.html: " + src + " is not <script type=\"module\">");
}

function jsFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? jsFiles(path.join(dir, e.name)) : e.name.endsWith(".js") ? [path.join(dir, e.name)] : []);
}

const files = new Map(); // path -> { exports, imports: [{ file, names }] }
for (const file of jsFiles(web)) {
  const rel = path.relative(web, file);
  let ast;
  try {
    ast = acorn.parse(fs.readFileSync(file, "utf8"), { ecmaVersion: "latest", sourceType: "module", locations: true });
  } catch (e) {
    fail(rel + ": " + e.message);
    continue;
  }
  const info = { exports: new Set(), imports: [] };
  files.set(file, info);
  const declared = new Set();
  const imported = new Map(); // local name -> its line
  for (const node of ast.body) {
    if (node.type === "ImportDeclaration") {
      const names = [];
      for (const s of node.specifiers) {
        declared.add(s.local.name);
        imported.set(s.local.name, s.loc.start.line);
        if (s.type === "ImportSpecifier") names.push(s.imported.name);
        else if (s.type === "ImportDefaultSpecifier") names.push("default");
      }
      if (!/^\.\.?\/.*\.js$/.test(node.source.value)) fail(rel + ": import from " + node.source.value + " (only ./ or ../ files of web/)");
      else info.imports.push({ file: path.resolve(path.dirname(file), node.source.value), names });
    } else if (node.type === "ExportNamedDeclaration") {
      const d = node.declaration;
      if (d && d.id) info.exports.add(d.id.name);
      if (d && d.declarations) for (const v of d.declarations) info.exports.add(v.id.name);
      for (const s of node.specifiers || []) info.exports.add(s.exported.name);
    } else if (node.type === "ExportDefaultDeclaration") {
      info.exports.add("default");
    }
  }
  const refs = [];
  walk.simple(ast, {
    VariablePattern(n) { declared.add(n.name); },
    Identifier(n) { refs.push(n); },
  });
  const used = new Set(refs.map((n) => n.name));
  for (const [name, line] of imported) if (!used.has(name)) fail(`${rel}:${line}: ${name} is imported and never used`);
  for (const n of refs) {
    if (!declared.has(n.name) && !BUILTINS.has(n.name) && !BROWSER.has(n.name)) {
      fail(`${rel}:${n.loc.start.line}: ${n.name} is neither declared nor imported (a global?)`);
    }
  }
}

// Each import resolves to a module of web/ that exports the names.
for (const [file, info] of files) {
  for (const imp of info.imports) {
    const to = files.get(imp.file);
    if (!to) { fail(path.relative(web, file) + ": imports " + path.relative(web, imp.file) + ", not a module of web/"); continue; }
    for (const n of imp.names) if (!to.exports.has(n)) fail(path.relative(web, file) + ": " + path.relative(web, imp.file) + " does not export " + n);
  }
}

// Every module is reachable from the entry, app.js.
const seen = new Set();
const visit = (f) => { if (seen.has(f) || !files.has(f)) return; seen.add(f); for (const i of files.get(f).imports) visit(i.file); };
visit(path.join(web, "app.js"));
for (const f of files.keys()) if (!seen.has(f)) fail(path.relative(web, f) + ": no module imports it (app.js is the entry)");

if (problems.length) {
  console.log(problems.join("\n"));
  process.exit(1);
}
console.log(`${files.size} modules of ${web}: each imports what it uses, from app.js`);
