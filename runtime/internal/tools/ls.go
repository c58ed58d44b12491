package tools

import (
	"context"
	"io/fs"
)

var lsTool = &tool{
	name:   "ls",
	effect: EffectWorkspaceRead,
	description: "List a directory in the workspace, sorted by name. Directories end with \"/\", symbolic links with \"@\" " +
		"(links are listed but never followed). Hidden and ignored files are listed too.",
	params: []param{
		{name: "path", kind: kindString, path: true,
			description: "Directory to list, relative to the workspace root. Default: the workspace root."},
		{name: "limit", kind: kindInteger, min: 1,
			description: "Maximum number of entries to show. Default 500."},
	},
	run: runLs,
}

func runLs(ctx context.Context, env Env, a *args) (Result, error) {
	limit := a.int("limit", 500)
	ents, err := env.Root.ReadDir(a.string("path", "."))
	if err != nil {
		return Result{}, err
	}
	if ctx.Err() != nil {
		return Result{}, canceled()
	}
	if len(ents) == 0 {
		return Result{Output: "(empty directory)"}, nil
	}
	out := newOutput(env.maxOutput())
	for i, e := range ents {
		if i == limit {
			n := len(ents) - limit
			out.Printf("... %d more %s; use limit=%d to see all\n", n, noun(n, "entry", "entries"), len(ents))
			break
		}
		out.WriteString(cleanLine([]byte(e.Name()), 0) + typeSuffix(e.Type()) + "\n")
	}
	s, truncated := out.result()
	return Result{Output: s, Truncated: truncated}, nil
}

// typeSuffix marks directories with "/" and links with "@".
func typeSuffix(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "/"
	case m&fs.ModeSymlink != 0:
		return "@"
	}
	return ""
}
