package tools

import (
	"context"
	"fmt"
	"path"
	"strings"
)

var writeTool = &tool{
	name:   "write",
	effect: EffectWorkspaceMutation,
	description: "Create or overwrite a file in the workspace with the given content. Missing parent directories are created. " +
		"The file is replaced atomically; an existing file keeps its permissions. Symbolic links are refused.",
	params: []param{
		{name: "path", kind: kindString, required: true, nonEmpty: true, path: true,
			description: "Path of the file, relative to the workspace root."},
		{name: "content", kind: kindString, required: true,
			description: "The complete new content of the file."},
	},
	run: runWrite,
}

func runWrite(ctx context.Context, env Env, a *args) (Result, error) {
	root := env.Root
	rel, err := mutableTarget(env, a.string("path", ""))
	if err != nil {
		return Result{}, err
	}
	if rel == "." {
		return Result{}, newError(CodeIsDirectory, "write .: the workspace root is a directory")
	}
	// The atomic replacement below is one step that runs to its end once
	// begun, so this is the last point to honour a cancellation.
	if ctx.Err() != nil {
		return Result{}, canceled()
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

// configDir is the workspace's .octet directory. A trusted workspace's
// .octet/settings.json is an operator layer of the tool policy (CONTRACT
// §10), so a model allowed to mutate files must not write there: one run
// could enable the shell for the next, and process, shell and network
// effects are enabled by the operator only, never through the protocol.
const configDir = ".octet"

// mutableTarget resolves path, the target of edit or write, to a
// workspace-relative path the tools may change: inside the workspace, not
// in its .octet directory, and not refused by the guard.
func mutableTarget(env Env, path string) (string, error) {
	rel, err := env.Root.Rel(path)
	if err != nil {
		return "", err
	}
	if err := checkMutable(rel); err != nil {
		return "", err
	}
	if err := env.Guard.Check(rel); err != nil {
		return "", err
	}
	return rel, nil
}

// checkMutable refuses a mutation of the workspace's .octet directory or
// anything in it. rel is a cleaned path relative to the workspace root.
// The comparison folds case, for workspaces on case-insensitive file
// systems.
func checkMutable(rel string) error {
	first, _, _ := strings.Cut(rel, "/")
	if strings.EqualFold(first, configDir) {
		return newError(CodeProtectedPath, rel+" is in the workspace's .octet directory, the operator's configuration; edit and write never change it")
	}
	return nil
}
