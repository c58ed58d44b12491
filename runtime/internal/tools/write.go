package tools

import (
	"context"
	"fmt"
	"path"
)

var writeTool = &tool{
	name:   "write",
	effect: EffectWorkspaceMutation,
	description: "Create or overwrite a file in the workspace with the given content. Missing parent directories are created. " +
		"The file is replaced atomically; an existing file keeps its permissions. Symbolic links are refused.",
	params: []param{
		{name: "path", kind: kindString, required: true, nonEmpty: true,
			description: "Path of the file, relative to the workspace root."},
		{name: "content", kind: kindString, required: true,
			description: "The complete new content of the file."},
	},
	run: runWrite,
}

func runWrite(ctx context.Context, env Env, a *args) (Result, error) {
	root := env.Root
	rel, err := root.Rel(a.string("path", ""))
	if err != nil {
		return Result{}, err
	}
	if rel == "." {
		return Result{}, newError(CodeIsDirectory, "write .: the workspace root is a directory")
	}
	if err := root.MkdirAll(path.Dir(rel)); err != nil {
		return Result{}, err
	}
	verb := "created"
	if _, err := root.Lstat(rel); err == nil {
		verb = "replaced"
	}
	content := a.string("content", "")
	if err := root.WriteFileAtomic(rel, []byte(content), 0o644); err != nil {
		return Result{}, err
	}
	return Result{
		Output:  fmt.Sprintf("%s %s (%s)", verb, rel, plural(len(content), "byte", "bytes")),
		Changed: []string{rel},
	}, nil
}
