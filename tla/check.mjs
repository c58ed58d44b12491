#!/usr/bin/env node
// check.mjs checks the TLA+ specs of record in this directory with
// tla-checker (a WebAssembly TLA+ model checker, pinned in package-lock.json)
// and fails loudly. See DESIGN §4 (Formal side).
//
//   node check.mjs                  check everything (npm test)
//   node check.mjs --update         also rewrite expected.json and every <Stem>.graph.json
//   node check.mjs --patches-only   only apply every mutant patch to the current
//                                   specs (no model checking; quick after an edit)
//   node check.mjs --mutants DIR    take the mutant patches from DIR, not mutants/
//                                   (the self-test in check.test.mjs uses it)
//
// For every <Stem>.cfg here (spec <Stem>.tla):
//   - model-check it: any invariant violation, deadlock, warning, error, or
//     hitting the state or depth cap fails the run;
//   - explore the reachable graph again through the checker's stepping API
//     (explore_init/explore_next) and require it to be exactly the graph the
//     checker reported (its DOT export), so what we export is what was checked;
//   - compare the number of distinct states with expected.json;
//   - if <Stem>.graph.json exists or the spec defines GraphView, export the
//     reachable graph, each state projected through GraphView (or whole), as
//     canonical JSON and require it to equal <Stem>.graph.json byte for byte.
// Every mutant is a patch, mutants/<Stem>Mutant<What>.patch: a header that
// says what it breaks and names, on an "EXPECT: <Invariant>" line, the
// invariant it must violate, then a unified diff against <Stem>.tla (and, if
// the mutant needs another model, <Stem>.cfg; otherwise it is checked with
// <Stem>.cfg). The format and how hunks are placed: patch.mjs. For each:
//   - the patch must apply to the current spec: a hunk whose context is not
//     found, or found more than once, fails the run, naming the mutant (all
//     patches are applied before any model checking, so this shows at once);
//   - its cfg must list the same invariants as <Stem>.cfg;
//   - it may change behaviour only: every definition the invariants depend on
//     must be <Stem>.tla's, word for word (comments aside);
//   - the check must fail with a violation of the EXPECT invariant (a mutant
//     that passes, or fails for another reason, fails the run);
//   - every invariant of <Stem>.cfg except TypeOK must be killed by some
//     mutant, so that none is vacuous.
// Anything in the mutants directory that is not a .patch fails the run.
//
// tla-checker checks safety here (invariants and deadlock) and nothing else:
// no liveness, no fairness; a cfg with PROPERTY fails the run (see temporal).
// Anything that needs liveness is checked elsewhere, on finite stand-ins
// (fsm/*/graph_test.go), or not at all; the specs say which.

import { readFileSync, writeFileSync, readdirSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PatchError, applyPatch, parsePatch } from './patch.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const PIN = '0.9.0';
const MAX_STATES = 100000; // hitting either cap fails the run
const MAX_DEPTH = 100; // counted as the checker does: states on a trace
const USAGE = 'usage: node check.mjs [--update | --patches-only] [--mutants DIR]';
let UPDATE = false;
let PATCHES_ONLY = false;
let MUTANTS = 'mutants';
{
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--update') UPDATE = true;
    else if (a === '--patches-only') PATCHES_ONLY = true;
    else if (a === '--mutants' && i + 1 < args.length) MUTANTS = args[++i];
    else {
      console.error(`${USAGE}\n${a === '--mutants' ? '--mutants needs a directory' : `unknown argument ${a}`}`);
      process.exit(2);
    }
  }
  if (UPDATE && PATCHES_ONLY) {
    console.error(`${USAGE}\n--update checks the specs, --patches-only does not: give one`);
    process.exit(2);
  }
}

const failures = [];
function fail(what, msg) {
  failures.push(`${what}: ${msg}`);
  console.log(`FAIL ${what}: ${msg}`);
}

// ---------------------------------------------------------------- checker

// loadChecker loads the pinned checker into tc, or exits.
let tc;
async function loadChecker() {
  const pkgDir = join(HERE, 'node_modules', 'tla-checker');
  try {
    const pkg = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8'));
    if (pkg.version !== PIN) {
      throw new Error(`tla-checker ${pkg.version} installed, ${PIN} pinned`);
    }
    tc = await import(pathToFileURL(join(pkgDir, 'tla_checker.js')).href);
    tc.initSync({ module: readFileSync(join(pkgDir, 'tla_checker_bg.wasm')) });
  } catch (e) {
    console.error(`check.mjs: cannot load tla-checker@${PIN}: ${e.message}\n(run "npm ci" in tla/)`);
    process.exit(1);
  }
}

// call runs one checker binding and parses its JSON answer; a trap in the
// wasm (a panic) becomes an exception.
function call(fn, ...args) {
  return JSON.parse(fn(...args));
}

// explorer wraps the stepping API for one spec and cfg.
function explorer(spec, cfg) {
  const ok = (r) => {
    if (!r.ok) throw new Error(r.error);
    return r;
  };
  return {
    init: () => ok(call(tc.explore_init, spec, cfg, '{}')),
    next: (st) => ok(call(tc.explore_next, spec, cfg, '{}', JSON.stringify(st))).transitions,
    invariants: (st) => ok(call(tc.explore_invariants, spec, cfg, '{}', JSON.stringify(st))).invariants,
    eval: (st, expr) => ok(call(tc.explore_eval, spec, cfg, '{}', JSON.stringify(st), expr)).json,
  };
}

// check model-checks spec with cfg and returns the checker's result.
function check(spec, cfg) {
  return call(tc.check_spec_with_cfg, spec, cfg, '{}', MAX_STATES, MAX_DEPTH, false, true);
}

// temporal reports whether a cfg asks for temporal properties. The harness
// refuses them: tla-checker 0.9.0 does check PROPERTY, but not with TLC's
// meaning (<>P passed on a spec that may stutter forever before P), so a
// pass would claim what was not shown. Safety only, said plainly.
function temporal(cfg) {
  const text = cfg.replace(/\(\*[\s\S]*?\*\)/g, ' ').replace(/\\\*.*$/gm, '');
  return /\bPROPERT(Y|IES)\b/.test(text);
}

// invariantNames returns the invariants the checker checks, in the order it
// numbers them in "Invariant N violated".
function invariantNames(spec, cfg) {
  const ex = explorer(spec, cfg);
  const init = ex.init();
  if (init.states.length === 0) return [];
  return ex.invariants(init.states[0].json).map((i) => i.name);
}

function describeFailure(r, names) {
  let msg = `${r.error_type}: ${r.error_message}`;
  const m = /^Invariant (\d+) violated$/.exec(r.error_message ?? '');
  if (m && names[Number(m[1])] !== undefined) msg = `invariant ${names[Number(m[1])]} violated`;
  if (r.trace) msg += '\n' + r.trace.join('\n--- cycle\n').replace(/^/gm, '    ');
  return msg;
}

// ---------------------------------------------------------------- canonical JSON

// canon sorts object keys recursively; arrays keep the checker's order
// (sets come out sorted, sequences in order).
function canon(v) {
  if (Array.isArray(v)) return v.map(canon);
  if (v !== null && typeof v === 'object') {
    const out = {};
    for (const k of Object.keys(v).sort()) out[k] = canon(v[k]);
    return out;
  }
  return v;
}
const key = (v) => JSON.stringify(canon(v));
const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

// ---------------------------------------------------------------- graphs

// explore enumerates the reachable graph breadth-first through the stepping
// API. States are keyed by their canonical typed JSON.
function explore(spec, cfg) {
  const ex = explorer(spec, cfg);
  const init = ex.init();
  const vars = init.vars;
  const states = new Map(); // key -> {json, display, depth}
  const queue = [];
  const add = (s, depth) => {
    const k = key(s.json);
    if (!states.has(k)) {
      states.set(k, { json: s.json, display: s.display, depth });
      queue.push(k);
      if (states.size > MAX_STATES) throw new Error(`explorer: more than ${MAX_STATES} states`);
    }
    return k;
  };
  const initial = init.states.map((s) => add(s, 1));
  const edges = [];
  for (let i = 0; i < queue.length; i++) {
    const from = queue[i];
    const st = states.get(from);
    for (const t of ex.next(st.json)) {
      edges.push([from, t.action ?? null, add(t.state, st.depth + 1)]);
    }
  }
  let depth = 0;
  for (const s of states.values()) depth = Math.max(depth, s.depth);
  return { ex, vars, states, initial, edges, depth };
}

// dotGraph reads the checker's DOT export: node labels (one "var=value" line
// per variable) and the edges between them. The DOT leaves out self-loops.
function dotGraph(dot) {
  const unescape = (s) => s.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
  const labels = new Map();
  const edges = new Set();
  for (const line of dot.split('\n')) {
    let m = /^\s*(s\d+) \[label="((?:[^"\\]|\\.)*)"/.exec(line);
    if (m) {
      labels.set(m[1], unescape(m[2]));
      continue;
    }
    m = /^\s*(s\d+) -> (s\d+)\b/.exec(line);
    if (m) edges.add(`${m[1]} ${m[2]}`);
  }
  return {
    nodes: new Set(labels.values()),
    edges: new Set([...edges].map((e) => e.split(' ').map((n) => labels.get(n)).join('\u0000'))),
  };
}

// sameGraph reports how the explored graph differs from the checker's DOT.
function sameGraph(g, dot) {
  const label = (k) => {
    const s = g.states.get(k);
    return g.vars.map((v) => `${v}=${s.display[v]}`).join('\n');
  };
  const nodes = new Set([...g.states.keys()].map(label));
  const edges = new Set();
  for (const [a, , b] of g.edges) if (a !== b) edges.add(label(a) + '\u0000' + label(b));
  const d = dotGraph(dot);
  const diff = (x, y) => [...x].filter((e) => !y.has(e)).length;
  const problems = [];
  if (nodes.size !== d.nodes.size || diff(nodes, d.nodes) > 0) {
    problems.push(`states: explored ${nodes.size}, checker ${d.nodes.size}, ${diff(nodes, d.nodes)} only explored, ${diff(d.nodes, nodes)} only in checker`);
  }
  if (edges.size !== d.edges.size || diff(edges, d.edges) > 0) {
    problems.push(`edges: explored ${edges.size}, checker ${d.edges.size}, ${diff(edges, d.edges)} only explored, ${diff(d.edges, edges)} only in checker`);
  }
  return problems;
}

// projectGraph maps every state through the view (a definition of the spec,
// evaluated by the checker; or the whole state) and returns the canonical
// graph: states sorted by their canonical JSON, initial state indexes,
// edges [from, action, to] sorted and without duplicates.
function projectGraph(g, view) {
  const proj = new Map();
  for (const [k, s] of g.states) proj.set(k, key(view ? g.ex.eval(s.json, view) : s.json));
  const states = [...new Set(proj.values())].sort(cmp);
  const index = new Map(states.map((s, i) => [s, i]));
  const at = (k) => index.get(proj.get(k));
  const initial = [...new Set(g.initial.map(at))].sort((a, b) => a - b);
  const seen = new Set();
  const edges = [];
  for (const [a, act, b] of g.edges) {
    const e = [at(a), act, at(b)];
    const k = JSON.stringify(e);
    if (!seen.has(k)) {
      seen.add(k);
      edges.push(e);
    }
  }
  edges.sort((x, y) => x[0] - y[0] || cmp(String(x[1]), String(y[1])) || x[2] - y[2]);
  return { states, initial, edges };
}

function serializeGraph(stem, view, p) {
  const list = (items) => items.map((s, i) => `    ${s}${i < items.length - 1 ? ',' : ''}`);
  return [
    '{',
    `  "spec": ${JSON.stringify(stem)},`,
    `  "view": ${JSON.stringify(view)},`,
    `  "initial": ${JSON.stringify(p.initial)},`,
    '  "states": [',
    ...list(p.states),
    '  ],',
    '  "edges": [',
    ...list(p.edges.map((e) => JSON.stringify(e))),
    '  ]',
    '}',
    '',
  ].join('\n');
}

// ---------------------------------------------------------------- mutants

// definitions splits a module into its top-level definitions (name -> body
// with comments removed and white space collapsed).
function definitions(src) {
  const text = src
    .replace(/\(\*[\s\S]*?\*\)/g, (c) => c.replace(/[^\n]/g, ' ')) // keep the lines
    .replace(/\\\*.*$/gm, '');
  const defs = new Map();
  let name = null;
  let body = [];
  const flush = () => {
    if (name !== null) defs.set(name, body.join(' ').replace(/\s+/g, ' ').trim());
  };
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_]\w*)\s*(\([^)]*\))?\s*==/.exec(line);
    if (m || /^(={4,}|-{4,}|VARIABLES?\b|CONSTANTS?\b|ASSUME\b|EXTENDS\b)/.test(line)) {
      flush();
      name = m ? m[1] : null;
      body = [];
    }
    if (name !== null) body.push(line);
  }
  flush();
  return defs;
}

// mutation checks that a mutant changes the base spec's behaviour, not what
// it checks: every definition the invariants depend on (transitively) must be
// the base's, word for word. It returns the names of the mutated definitions.
function mutation(baseSrc, mutSrc, invariants) {
  const base = definitions(baseSrc);
  const mut = definitions(mutSrc);
  const problems = [];
  const deps = new Set();
  const visit = (n) => {
    if (deps.has(n) || !base.has(n)) return;
    deps.add(n);
    for (const id of base.get(n).match(/[A-Za-z_]\w*/g) ?? []) visit(id);
  };
  invariants.forEach(visit);
  for (const n of base.keys()) {
    if (!mut.has(n)) problems.push(`drops definition ${n}`);
    else if (deps.has(n) && mut.get(n) !== base.get(n)) problems.push(`changes ${n}, which the invariants depend on`);
  }
  const changed = [...mut.keys()].filter((n) => base.get(n) !== mut.get(n));
  if (changed.length === 0) problems.push('is the base spec unchanged');
  return { changed, problems };
}

// baseFiles returns the current <stem>.tla and <stem>.cfg (null when the
// spec is missing: the spec check reports that).
const baseCache = new Map();
function baseFiles(stem) {
  if (!baseCache.has(stem)) {
    const tla = join(HERE, `${stem}.tla`);
    baseCache.set(stem, existsSync(tla) ? { tla: readFileSync(tla, 'utf8'), cfg: readFileSync(join(HERE, `${stem}.cfg`), 'utf8') } : null);
  }
  return baseCache.get(stem);
}

// prepareMutants reads every patch in dir and applies it, in memory, to the
// current <Stem>.tla and <Stem>.cfg. A mutant whose patch is malformed,
// stale (a hunk not found) or ambiguous (a hunk found more than once) fails
// the run here, named; the others are returned, ready to check.
function prepareMutants(dir, label, stems) {
  if (!existsSync(dir)) {
    fail(label, 'no such mutants directory');
    return [];
  }
  const out = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.patch')) {
      fail(`${label}/${f}`, 'not a .patch: every mutant is a patch, <Stem>Mutant<What>.patch (format: patch.mjs)');
      continue;
    }
    const m = f.slice(0, -'.patch'.length);
    const what = `${label}/${m}`;
    const base = /^(.+?)Mutant\w+$/.exec(m)?.[1];
    if (!base || !stems.includes(base)) {
      fail(what, 'name must be <Stem>Mutant<What>.patch for a checked <Stem>.tla');
      continue;
    }
    const files = baseFiles(base);
    if (!files) {
      fail(what, `${base}.tla is missing`);
      continue;
    }
    try {
      const patch = parsePatch(readFileSync(join(dir, f), 'utf8'));
      const expects = [...patch.header.matchAll(/^EXPECT:(.*)$/gm)].map((x) => x[1].trim());
      if (expects.length !== 1 || !/^[A-Za-z_]\w*$/.test(expects[0])) {
        fail(what, 'the patch header must have exactly one line "EXPECT: <Invariant>" naming the invariant the mutant must violate');
        continue;
      }
      const patched = applyPatch({ [`${base}.tla`]: files.tla, [`${base}.cfg`]: files.cfg }, patch);
      out.push({
        what,
        base,
        spec: patched[`${base}.tla`],
        cfg: patched[`${base}.cfg`],
        want: expects[0],
        hunks: patch.sections.reduce((n, s) => n + s.hunks.length, 0),
      });
    } catch (e) {
      if (!(e instanceof PatchError)) throw e;
      fail(what, `patch rejected: ${e.message}`);
    }
  }
  return out;
}

// finish prints the verdict and exits: 1 if anything failed.
function finish(summary) {
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  if (failures.length > 0) {
    console.log(`\nFAILED: ${failures.length} problem(s) in ${secs}s`);
    process.exit(1);
  }
  console.log(`\nPASS: ${summary} in ${secs}s`);
  process.exit(0);
}

// ---------------------------------------------------------------- main

const started = Date.now();
const stems = readdirSync(HERE)
  .filter((f) => f.endsWith('.cfg'))
  .map((f) => f.slice(0, -4))
  .sort();
const expectedPath = join(HERE, 'expected.json');
const expected = existsSync(expectedPath) ? JSON.parse(readFileSync(expectedPath, 'utf8')) : {};
const pinned = {};
const bases = new Map(); // stem -> invariant names, for specs that passed

if (stems.length === 0) fail('tla', 'no *.cfg found');

// Apply every mutant patch first: a stale one shows before the long checks.
const mutDir = resolve(HERE, MUTANTS);
const mutLabel = relative(HERE, mutDir) || '.';
const mutants = prepareMutants(mutDir, mutLabel, stems);
if (PATCHES_ONLY) {
  for (const mu of mutants) console.log(`${mu.what}: applies to ${mu.base}.tla (${mu.hunks} hunk(s)), expects ${mu.want} violated`);
  finish(`${mutants.length} mutant patch(es) apply`);
}

await loadChecker();
console.log(`tla-checker ${PIN}: caps ${MAX_STATES} states, depth ${MAX_DEPTH}; safety only (invariants, deadlock)`);

for (const stem of stems) {
  const files = baseFiles(stem);
  if (!files) {
    fail(stem, `${stem}.cfg has no ${stem}.tla`);
    continue;
  }
  const { tla: spec, cfg } = files;
  if (temporal(cfg)) {
    fail(stem, 'PROPERTY in the cfg: this harness checks safety only (see temporal in check.mjs)');
    continue;
  }
  try {
    const r = check(spec, cfg);
    if (r.warnings.length > 0) fail(stem, `checker warnings:\n    ${r.warnings.join('\n    ')}`);
    if (!r.success) {
      let names = [];
      try {
        names = invariantNames(spec, cfg);
      } catch {
        // the checker's own message says what is wrong
      }
      fail(stem, describeFailure(r, names));
      continue;
    }
    const names = invariantNames(spec, cfg);
    const g = explore(spec, cfg);
    for (const p of sameGraph(g, r.dot ?? '')) fail(stem, `explored graph differs from the checker's: ${p}`);
    const distinct = g.states.size;
    let line = `${stem}: ok  states ${r.states_explored}  distinct ${distinct}  depth ${g.depth}  transitions ${g.edges.length}  invariants ${names.join(', ') || '(none)'}`;

    pinned[stem] = { distinct_states: distinct };
    const want = expected[stem]?.distinct_states;
    if (!UPDATE && want !== distinct) {
      fail(stem, want === undefined ? `no pinned count in expected.json (distinct ${distinct}; run with --update)` : `distinct states ${distinct}, expected.json pins ${want}`);
    }

    const graphPath = join(HERE, `${stem}.graph.json`);
    const view = /^GraphView\s*==/m.test(spec) ? 'GraphView' : null;
    if (existsSync(graphPath) || view) {
      const p = projectGraph(g, view);
      const text = serializeGraph(stem, view, p);
      line += `\n  graph (${view ?? 'whole state'}): ${p.states.length} states, ${p.edges.length} edges`;
      if (UPDATE) {
        writeFileSync(graphPath, text);
        line += `, wrote ${stem}.graph.json`;
      } else if (!existsSync(graphPath)) {
        fail(stem, `${stem}.graph.json missing (run with --update)`);
      } else if (readFileSync(graphPath, 'utf8') !== text) {
        fail(stem, `reachable graph differs from ${stem}.graph.json (run with --update and review the diff)`);
      } else {
        line += `, equal to ${stem}.graph.json`;
      }
    }
    console.log(line);
    bases.set(stem, names);
  } catch (e) {
    fail(stem, `checker error: ${e.message}`);
  }
}

// ---------------------------------------------------------------- mutants

const killed = new Map(); // base -> Set of invariant names

for (const { what, base, spec, cfg, want } of mutants) {
  if (temporal(cfg)) {
    fail(what, 'PROPERTY in the cfg: this harness checks safety only (see temporal in check.mjs)');
    continue;
  }
  try {
    const names = invariantNames(spec, cfg);
    const baseNames = bases.get(base);
    if (baseNames && names.join(' ') !== baseNames.join(' ')) {
      fail(what, `checks invariants [${names.join(', ')}], ${base}.cfg checks [${baseNames.join(', ')}]; a mutant must be checked against them all`);
      continue;
    }
    const mut = mutation(baseFiles(base).tla, spec, names);
    if (mut.problems.length > 0) {
      fail(what, `a mutant must change behaviour only, yet it ${mut.problems.join('; ')}`);
      continue;
    }
    const r = check(spec, cfg);
    if (r.warnings.length > 0) fail(what, `checker warnings:\n    ${r.warnings.join('\n    ')}`);
    if (r.success) {
      fail(what, `mutant PASSED (expected ${want} to be violated): the invariant may be vacuous or the mutant ineffective`);
      continue;
    }
    const idx = /^Invariant (\d+) violated$/.exec(r.error_message ?? '')?.[1];
    const got = r.error_type === 'InvariantViolation' && idx !== undefined ? names[Number(idx)] : undefined;
    if (got !== want) {
      fail(what, `expected a violation of ${want}, got ${describeFailure(r, names)}`);
      continue;
    }
    const depth = (r.trace?.[0]?.match(/^State \d+$/gm) ?? []).length;
    console.log(`${what}: mutates ${mut.changed.join(', ')}; killed by ${got} (trace of ${depth} states, ${r.states_explored} states explored)`);
    if (!killed.has(base)) killed.set(base, new Set());
    killed.get(base).add(got);
  } catch (e) {
    fail(what, `checker error: ${e.message}`);
  }
}

for (const [base, names] of bases) {
  const missing = names.filter((n) => n !== 'TypeOK' && !killed.get(base)?.has(n));
  if (missing.length > 0) {
    fail(base, `no mutant violates ${missing.join(', ')} (add ${mutLabel}/${base}Mutant*.patch, or the invariant may be vacuous)`);
  } else if (names.length > 0) {
    console.log(`${base}: every invariant but TypeOK is killed by a mutant`);
  }
}

// ---------------------------------------------------------------- pins

if (UPDATE) {
  const all = { ...pinned };
  const text = JSON.stringify(canon(all), null, 2) + '\n';
  if (failures.length === 0) {
    writeFileSync(expectedPath, text);
    console.log('wrote expected.json');
  } else {
    console.log('expected.json not written: fix the failures first');
  }
} else {
  for (const stem of Object.keys(expected)) {
    if (!stems.includes(stem)) fail(stem, `expected.json pins ${stem}, which has no ${stem}.cfg (run with --update)`);
  }
}

finish(`${stems.length} spec(s), ${mutants.length} mutant(s)`);
