// patch.mjs reads the mutant patches of tla/mutants and applies them, in
// memory, to the current specs. A patch is a unified diff (what `diff -u`
// writes) after a free-text header:
//
//   <description of the mutation, any number of lines>
//   EXPECT: <Invariant the mutant must violate>
//
//   --- Recovery.tla
//   +++ Recovery.tla
//   @@ -262,3 +262,3 @@ Cancel ==
//    Cancel ==
//   -    /\ phase \in Live
//   +    /\ phase \in Live \cup {"failed"}
//        /\ IF phase = "attempting"
//
// The header ends at the first line that starts with "--- ". Each "--- "
// line opens a section for the file it names (an "a/" prefix and a
// tab-separated timestamp are allowed); a "+++ " line must follow it and is
// not read otherwise. A section's hunks are placed by their text, never by
// their line numbers: the old side of a hunk (its context and "-" lines)
// must occur exactly once in the current file, as whole lines, or the patch
// does not apply. Hunk line counts must agree with the hunk's body. An empty
// line inside a hunk is an empty context line (editors strip the lone
// space). All hunks of a section are placed in the unpatched file; they must
// not overlap.

export class PatchError extends Error {}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$/;

// fileName returns the file a "--- " or "+++ " line names.
function fileName(line) {
  let name = line.slice(4).split('\t')[0].trim();
  if (name.startsWith('a/') || name.startsWith('b/')) name = name.slice(2);
  return name;
}

// noNewlineMarker refuses diff's "\\ No newline at end of file" at lines[i]:
// the specs end with a newline, and a patch may not change that.
function noNewlineMarker(lines, i) {
  if (lines[i].startsWith('\\')) {
    throw new PatchError(`patch line ${i + 1}: ${JSON.stringify(lines[i])} is not supported: the specs end with a newline`);
  }
}

// parsePatch splits a patch into its header and its sections (one per
// patched file, each with its hunks). It throws a PatchError naming the
// patch line of anything malformed.
export function parsePatch(text) {
  if (text.includes('\r')) throw new PatchError('carriage return in the patch: use LF line endings');
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  let i = 0;
  const header = [];
  while (i < lines.length && !lines[i].startsWith('--- ')) header.push(lines[i++]);
  const sections = [];
  while (i < lines.length) {
    const at = i + 1;
    if (lines[i] === '' && lines.slice(i).every((l) => l === '')) break; // trailing blank lines
    if (!lines[i].startsWith('--- ')) {
      throw new PatchError(`patch line ${at}: expected "--- <file>" or "@@ ... @@", got ${JSON.stringify(lines[i])}`);
    }
    const file = fileName(lines[i++]);
    if (file === '') throw new PatchError(`patch line ${at}: "---" names no file`);
    if (i >= lines.length || !lines[i].startsWith('+++ ')) {
      throw new PatchError(`patch line ${at + 1}: "--- ${file}" must be followed by a "+++ " line`);
    }
    i++;
    if (sections.some((s) => s.file === file)) {
      throw new PatchError(`patch line ${at}: a second section for ${file}; put all its hunks in one section`);
    }
    const hunks = [];
    while (i < lines.length && lines[i].startsWith('@@')) {
      const hat = i + 1;
      const m = HUNK.exec(lines[i]);
      if (!m) throw new PatchError(`patch line ${hat}: malformed hunk header ${JSON.stringify(lines[i])}`);
      const oldCount = m[2] === undefined ? 1 : Number(m[2]);
      const newCount = m[4] === undefined ? 1 : Number(m[4]);
      const hunk = { header: lines[i], line: hat, old: [], new: [], changes: 0 };
      i++;
      while (hunk.old.length < oldCount || hunk.new.length < newCount) {
        if (i >= lines.length) {
          throw new PatchError(`patch line ${hat}: hunk ends early (header counts ${oldCount} old, ${newCount} new lines; body has ${hunk.old.length} and ${hunk.new.length})`);
        }
        const l = lines[i];
        const body = l.slice(1);
        noNewlineMarker(lines, i);
        if (l === '' || l[0] === ' ') {
          hunk.old.push(body);
          hunk.new.push(body);
        } else if (l[0] === '-') {
          hunk.old.push(body);
          hunk.changes++;
        } else if (l[0] === '+') {
          hunk.new.push(body);
          hunk.changes++;
        } else {
          throw new PatchError(`patch line ${i + 1}: a hunk line must start with " ", "-" or "+", got ${JSON.stringify(l)}`);
        }
        i++;
      }
      if (i < lines.length) noNewlineMarker(lines, i);
      if (hunk.old.length !== oldCount || hunk.new.length !== newCount) {
        throw new PatchError(`patch line ${hat}: hunk body has ${hunk.old.length} old and ${hunk.new.length} new lines, its header says ${oldCount} and ${newCount}`);
      }
      if (hunk.changes === 0) throw new PatchError(`patch line ${hat}: hunk changes nothing`);
      if (hunk.old.length === 0) throw new PatchError(`patch line ${hat}: hunk has no context lines, so it cannot be placed`);
      hunks.push(hunk);
    }
    if (hunks.length === 0) throw new PatchError(`patch line ${at}: section for ${file} has no hunks`);
    sections.push({ file, hunks });
  }
  if (sections.length === 0) throw new PatchError('no "--- <file>" section: the patch changes nothing');
  return { header: header.join('\n'), sections };
}

// occurrences returns every index at which needle occurs in hay (arrays of
// lines).
function occurrences(hay, needle) {
  const found = [];
  for (let s = 0; s + needle.length <= hay.length; s++) {
    let k = 0;
    while (k < needle.length && hay[s + k] === needle[k]) k++;
    if (k === needle.length) found.push(s);
  }
  return found;
}

// applySection returns text with the section's hunks applied; it throws a
// PatchError when a hunk is not found exactly once or two hunks overlap.
export function applySection(text, section) {
  const lines = text.split('\n');
  const placed = [];
  section.hunks.forEach((h, n) => {
    const what = `${section.file} hunk ${n + 1} (patch line ${h.line}, ${h.header})`;
    const at = occurrences(lines, h.old);
    if (at.length === 0) {
      throw new PatchError(`${what} does not apply: its context and removed lines are not in the current ${section.file} (the spec changed: rewrite the patch against it)`);
    }
    if (at.length > 1) {
      throw new PatchError(`${what} is ambiguous: its context and removed lines occur ${at.length} times in ${section.file} (at lines ${at.map((s) => s + 1).join(', ')}); add context to make it unique`);
    }
    placed.push({ start: at[0], hunk: h, what });
  });
  placed.sort((a, b) => a.start - b.start);
  for (let k = 1; k < placed.length; k++) {
    const prev = placed[k - 1];
    if (placed[k].start < prev.start + prev.hunk.old.length) {
      throw new PatchError(`${placed[k].what} overlaps ${prev.what}`);
    }
  }
  for (const p of placed.reverse()) lines.splice(p.start, p.hunk.old.length, ...p.hunk.new);
  return lines.join('\n');
}

// applyPatch applies a parsed patch to files (name -> text) and returns the
// patched copies of every file (the others unchanged). A section for a file
// not in files is a PatchError.
export function applyPatch(files, patch) {
  const out = { ...files };
  for (const s of patch.sections) {
    if (!Object.hasOwn(files, s.file)) {
      throw new PatchError(`patches ${s.file}, which it may not (it may patch ${Object.keys(files).join(' and ')})`);
    }
    out[s.file] = applySection(files[s.file], s);
  }
  return out;
}
