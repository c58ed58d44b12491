package tools

import (
	"context"
	"io/fs"
)

var findTool = &tool{
	name:   "find",
	effect: EffectWorkspaceRead,
	description: "Find files and directories in the workspace whose path matches a glob. " +
		"A pattern without \"/\" is matched against base names at any depth (\"*.go\"); a pattern with \"/\" against the " +
		"path relative to the workspace root, where \"**\" matches any number of directories (\"src/**/*_test.go\"). " +
		"Results are sorted; directories end with \"/\". Skips .git and files ignored by .gitignore files; " +
		"symbolic links are listed but not followed.",
	params: []param{
		{name: "pattern", kind: kindString, required: true, nonEmpty: true,
			description: "Glob: *, ?, [abc], and ** for any number of directories."},
		{name: "path", kind: kindString, path: true,
			description: "Directory to search, relative to the workspace root. Default: the workspace root."},
		{name: "limit", kind: kindInteger, min: 1,
			description: "Maximum number of results. Default 1000."},
	},
	run: runFind,
}

func runFind(ctx context.Context, env Env, a *args) (Result, error) {
	limit := a.int("limit", 1000)
	m, err := newMatcher(a.string("pattern", ""))
	if err != nil {
		return Result{}, invalidArgs("pattern: %s", err)
	}
	start, err := env.Root.Rel(a.string("path", "."))
	if err != nil {
		return Result{}, err
	}
	fi, err := env.Root.Stat(start)
	if err != nil {
		return Result{}, err
	}
	if !fi.IsDir() {
		return Result{}, newError(CodeNotDirectory, "find "+start+": not a directory")
	}
	ig := newIgnorer(env.Root)
	ig.loadAncestors(start)
	out := newOutput(env.maxOutput())
	n, full := 0, false
	err = env.Root.Walk(start, func(rel string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			if rel == start {
				return err
			}
			return nil // an unreadable subdirectory is skipped
		}
		if rel == start {
			ig.load(rel)
			return nil
		}
		if d.Name() == ".git" || ig.ignored(rel, d.IsDir()) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			ig.load(rel)
		}
		if !m.match(rel) {
			return nil
		}
		if n == limit {
			full = true
			return fs.SkipAll
		}
		n++
		out.WriteString(cleanLine([]byte(env.prefix+rel), 0) + typeSuffix(d.Type()&fs.ModeDir) + "\n")
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	if n == 0 {
		return Result{Output: "(no matches)"}, nil
	}
	if full {
		out.Printf("[limit of %d results reached; narrow the pattern or the path, or raise limit]\n", limit)
	}
	s, truncated := out.result()
	return Result{Output: s, Truncated: truncated}, nil
}
