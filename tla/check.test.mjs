// Self-tests of the mutant patches (patch.mjs) and of check.mjs's handling
// of them; npm test runs them before check.mjs. They do not model-check:
// check.mjs runs with --patches-only, which applies the patches and stops.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PatchError, applyPatch, parsePatch } from './patch.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

const SPEC = ['---- MODULE M ----', 'A ==', '    /\\ x = 0', '', 'B ==', '    /\\ x = 0', '    /\\ y = 1', '===='].join('\n') + '\n';
const CFG = 'INIT Init\nNEXT Next\n';

// patchOf builds a patch from its header and body lines.
const patchOf = (...lines) => ['What it breaks.', 'EXPECT: Inv', '', ...lines].join('\n') + '\n';

function apply(text, files = { 'M.tla': SPEC, 'M.cfg': CFG }) {
  return applyPatch(files, parsePatch(text));
}

test('a hunk is placed by its text, not its line numbers', () => {
  const out = apply(patchOf('--- M.tla', '+++ M.tla', '@@ -900,2 +900,2 @@ B ==', '     /\\ x = 0', '-    /\\ y = 1', '+    /\\ y = 2'));
  assert.equal(out['M.tla'], SPEC.replace('y = 1', 'y = 2'));
  assert.equal(out['M.cfg'], CFG);
});

test('the header and EXPECT line are kept apart from the sections', () => {
  const p = parsePatch(patchOf('--- M.tla\t2026-01-01 00:00:00.0 +0000', '+++ /tmp/edited.tla\t2026-01-01 00:01:00.0 +0000', '@@ -7 +7 @@', '-    /\\ y = 1', '+    /\\ y = 2'));
  assert.equal(p.header, 'What it breaks.\nEXPECT: Inv\n');
  assert.deepEqual(
    p.sections.map((s) => [s.file, s.hunks.length]),
    [['M.tla', 1]],
  );
});

test('a stale hunk (context not found) is refused', () => {
  assert.throws(
    () => apply(patchOf('--- M.tla', '+++ M.tla', '@@ -5,2 +5,2 @@', ' B ==', '-    /\\ x = 1', '+    /\\ x = 2')),
    (e) => e instanceof PatchError && /M\.tla hunk 1 \(patch line 6, @@ -5,2 \+5,2 @@\) does not apply/.test(e.message),
  );
});

test('an ambiguous hunk (context found twice) is refused', () => {
  assert.throws(
    () => apply(patchOf('--- M.tla', '+++ M.tla', '@@ -3 +3 @@', '-    /\\ x = 0', '+    /\\ x = 1')),
    (e) => e instanceof PatchError && /is ambiguous: .* occur 2 times in M\.tla \(at lines 3, 6\)/.test(e.message),
  );
});

test('an empty line in a hunk is an empty context line', () => {
  const out = apply(patchOf('--- M.tla', '+++ M.tla', '@@ -3,3 +3,3 @@', '     /\\ x = 0', '', '-B ==', '+B(z) =='));
  assert.equal(out['M.tla'], SPEC.replace('B ==', 'B(z) =='));
});

test('the cfg can be patched too, in its own section', () => {
  const out = apply(patchOf('--- M.tla', '+++ M.tla', '@@ -2 +2 @@', '-A ==', '+A2 ==', '--- M.cfg', '+++ M.cfg', '@@ -1 +1 @@', '-INIT Init', '+INIT Init2'));
  assert.equal(out['M.tla'], SPEC.replace('A ==', 'A2 =='));
  assert.equal(out['M.cfg'], CFG.replace('Init', 'Init2'));
});

test('malformed patches are refused with the patch line', () => {
  const bad = [
    [patchOf('--- M.tla', '+++ M.tla', '@@ -2,2 +2,2 @@', '-A =='), /hunk ends early/],
    [patchOf('--- M.tla', '+++ M.tla', '@@ -2,1 +2,1 @@', '-A ==', '+A2 ==', '+extra'), /expected "--- <file>"/],
    [patchOf('--- M.tla', '+++ M.tla', '@@ -2,1 +2,1 @@', '-A ==', '-', '+A2 =='), /hunk body has 2 old and 1 new lines, its header says 1 and 1/],
    [patchOf('--- M.tla', '@@ -2 +2 @@', '-A ==', '+A2 =='), /must be followed by a "\+\+\+ " line/],
    [patchOf('--- M.tla', '+++ M.tla', '@@ -2 +2 @@', ' A =='), /changes nothing/],
    [patchOf('--- M.tla', '+++ M.tla', '@@ -0,0 +1 @@', '+X =='), /no context lines/],
    [patchOf('--- M.tla', '+++ M.tla', '@@ -2 +2 @@', '-A ==', '+A2 ==', '\\ No newline at end of file'), /not supported/],
    [patchOf('--- M.tla', '+++ M.tla', '@@ -2 +2 @@', '*A =='), /must start with " ", "-" or "\+"/],
    [patchOf('--- M.tla', '+++ M.tla', '@@ bad @@'), /malformed hunk header/],
    [patchOf('--- M.tla', '+++ M.tla'), /has no hunks/],
    [patchOf('--- M.tla', '+++ M.tla', '@@ -2 +2 @@', '-A ==', '+A2 ==', '--- M.tla', '+++ M.tla', '@@ -5 +5 @@', '-B ==', '+B2 =='), /second section for M\.tla/],
    [patchOf(), /no "--- <file>" section/],
    [patchOf('--- M.tla', '+++ M.tla', '@@ -2 +2 @@', '-A ==', '+A2 ==').replace(/\n/g, '\r\n'), /carriage return/],
  ];
  for (const [text, want] of bad) {
    assert.throws(() => apply(text), (e) => e instanceof PatchError && want.test(e.message), `${JSON.stringify(text)} should fail with ${want}`);
  }
});

test('overlapping hunks are refused', () => {
  assert.throws(
    () => apply(patchOf('--- M.tla', '+++ M.tla', '@@ -5,2 +5,2 @@', ' B ==', '-    /\\ x = 0', '+    /\\ x = 1', '@@ -6,2 +6,2 @@', '     /\\ x = 0', '-    /\\ y = 1', '+    /\\ y = 2')),
    (e) => e instanceof PatchError && /hunk 2 .* overlaps M\.tla hunk 1/.test(e.message),
  );
});

test('a patch may touch only its own spec and cfg', () => {
  assert.throws(
    () => apply(patchOf('--- Other.tla', '+++ Other.tla', '@@ -2 +2 @@', '-A ==', '+A2 ==')),
    (e) => e instanceof PatchError && /patches Other\.tla, which it may not/.test(e.message),
  );
});

// checkMjs runs check.mjs with args and returns its exit status and output.
function checkMjs(...args) {
  const r = spawnSync(process.execPath, [join(HERE, 'check.mjs'), ...args], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}

test('check.mjs: every mutant patch applies to the current specs', () => {
  const n = readdirSync(join(HERE, 'mutants')).length;
  const { status, out } = checkMjs('--patches-only');
  assert.equal(status, 0, out);
  assert.match(out, new RegExp(`PASS: ${n} mutant patch\\(es\\) apply`));
});

test('check.mjs: a stale or ambiguous patch fails the run, naming the mutant', () => {
  const { status, out } = checkMjs('--patches-only', '--mutants', 'selftest/stale');
  assert.equal(status, 1, out);
  assert.match(out, /FAIL selftest\/stale\/RecoveryMutantStale: patch rejected: Recovery\.tla hunk 1 .* does not apply/);
  assert.match(out, /FAIL selftest\/stale\/SteeringMutantAmbiguous: patch rejected: Steering\.tla hunk 1 .* is ambiguous/);
  assert.match(out, /FAILED: 2 problem\(s\)/);
});

test('check.mjs: a whole-file mutant, a bad name or a missing EXPECT fails the run', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tla-mutants-'));
  try {
    const ok = ['--- Steering.tla', '+++ Steering.tla', '@@ -1 +1 @@'];
    writeFileSync(join(dir, 'SteeringMutantCopy.tla'), '---- MODULE SteeringMutantCopy ----\n====\n');
    writeFileSync(join(dir, 'NoSuchMutantX.patch'), patchOf(...ok));
    writeFileSync(join(dir, 'SteeringMutantNoExpect.patch'), 'No expectation.\n\n--- Steering.tla\n+++ Steering.tla\n@@ -1 +1 @@\n-x\n+y\n');
    const { status, out } = checkMjs('--patches-only', '--mutants', dir);
    assert.equal(status, 1, out);
    assert.match(out, /SteeringMutantCopy\.tla: not a \.patch/);
    assert.match(out, /NoSuchMutantX: name must be <Stem>Mutant<What>\.patch/);
    assert.match(out, /SteeringMutantNoExpect: the patch header must have exactly one line "EXPECT: <Invariant>"/);
    assert.match(out, /FAILED: 3 problem\(s\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('check.mjs: bad arguments are refused', () => {
  assert.equal(checkMjs('--bogus').status, 2);
  assert.equal(checkMjs('--mutants').status, 2);
  assert.equal(checkMjs('--update', '--patches-only').status, 2);
});
