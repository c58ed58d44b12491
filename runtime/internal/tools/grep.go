package tools

import (
	"context"
	"errors"
	"regexp/syntax"

	"octet.dev/host/internal/textutil"
	"octet.dev/host/runtime/internal/confine"
)

var grepTool = &tool{
	name:   "grep",
	effect: EffectWorkspaceRead,
	description: "Search file contents in the workspace for a regular expression (RE2 syntax) or, with literal, a plain string. " +
		"Prints path:line:text for each matching line, sorted by path (context lines as path-line-text, groups separated by --). " +
		"Skips .git, binary files, files ignored by .gitignore files, and symbolic links. Lines longer than 500 bytes are cut in the output; a line longer than 256 KiB is searched in its first 256 KiB only.",
	params: []param{
		{name: "pattern", kind: kindString, required: true, nonEmpty: true,
			description: "Regular expression (RE2 syntax), matched against each line; or a plain string when literal is true."},
		{name: "path", kind: kindString, path: true,
			description: "File or directory to search, relative to the workspace root. Default: the workspace root."},
		{name: "glob", kind: kindString,
			description: "Only search files whose name matches this glob, e.g. \"*.go\" (a glob with \"/\" is matched against the workspace-relative path)."},
		{name: "ignore_case", kind: kindBoolean,
			description: "Match case-insensitively. Default false."},
		{name: "literal", kind: kindBoolean,
			description: "Treat pattern as a plain string, not a regular expression. Default false."},
		{name: "context", kind: kindInteger, min: 0,
			description: "Number of lines of context to show before and after each match. Default 0."},
		{name: "limit", kind: kindInteger, min: 1,
			description: "Maximum number of matching lines to report. Default 200."},
	},
	run: runGrep,
}

const (
	// grepLineBytes bounds each line grep prints.
	grepLineBytes = 500
	// grepMaxFileBytes is the largest file grep reads; larger ones are
	// skipped and counted.
	grepMaxFileBytes = 32 << 20
	// grepBufBytes is each worker's read buffer. A file is searched one
	// buffer of whole lines at a time, so a longer line is searched in its
	// first grepBufBytes bytes only (the output says how many were).
	grepBufBytes = 256 << 10
	// grepStepBytes is about how much of a region grep searches between
	// two checks of its context.
	grepStepBytes = 32 << 10
	// grepMaxWorkers bounds the files searched at once, and with it the
	// buffers.
	grepMaxWorkers = 4
)

func runGrep(ctx context.Context, env Env, a *args) (Result, error) {
	limit, ctxLines := a.int("limit", 200), a.int("context", 0)
	s, err := newSearcher(a.string("pattern", ""), a.bool("literal"), a.bool("ignore_case"))
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return Result{}, invalidArgs("pattern is not a valid RE2 regular expression: %s (use literal=true for a plain string)", textutil.Truncate(se.Error(), 300))
		}
		return Result{}, invalidArgs("pattern: %s", textutil.Truncate(err.Error(), 300))
	}
	var glob *matcher
	if g := a.string("glob", ""); g != "" {
		if glob, err = newMatcher(g); err != nil {
			return Result{}, invalidArgs("glob: %s", err)
		}
	}
	root := env.Root
	start, err := root.Rel(a.string("path", "."))
	if err != nil {
		return Result{}, err
	}
	fi, err := root.Stat(start)
	if err != nil {
		return Result{}, err
	}

	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g := &gather{res: map[int]*fileHits{}, limit: limit, max: env.maxOutput(), cancel: cancel}
	job := grepParams{root: root, s: s, limit: limit, ctxLines: ctxLines, budget: env.maxOutput()}

	if !fi.IsDir() {
		// An explicitly named file is searched whatever the ignore rules
		// and the glob say, and a binary one is an error.
		sc := getScratch()
		h, err := job.file(gctx, start, sc, true)
		putScratch(sc)
		if err != nil {
			if ctx.Err() != nil {
				return Result{}, canceled()
			}
			return Result{}, err
		}
		g.done(0, h)
	} else {
		if err := grepTree(gctx, job, glob, start, g); err != nil {
			return Result{}, err
		}
	}
	if ctx.Err() != nil {
		return Result{}, canceled()
	}
	if env.prefix != "" { // a skill folder's files are named by their skill path
		for _, h := range g.res {
			if h != nil {
				h.rel = env.prefix + h.rel
			}
		}
	}
	return Result{}.withOutput(formatGrep(g, limit, ctxLines, env.maxOutput())), nil
}

// grepParams is what every file's search shares.
type grepParams struct {
	root            *confine.Root
	s               *searcher
	limit, ctxLines int
	budget          int // the output bound
}
