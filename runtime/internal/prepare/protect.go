package prepare

import (
	"path/filepath"
	"strconv"

	"octet.dev/host/runtime/internal/confine"
)

// OperatorGuard protects every operator layer from the model's edit and
// write: the user's ~/.octet (settings, credentials,
// models, sessions) and the workspace's .octet, wherever each lies
// relative to the workspace. A HOME inside the workspace, a workspace
// inside ~/.octet, a link or a bind mount to either: the guard compares
// the identity (device and inode) of every directory a mutation opens,
// not spellings, and remembers a directory that does not exist yet by its
// name below the nearest one that does. The operator's explicit resource
// roots (CONTRACT §18) are protected the same way.
func OperatorGuard(root *confine.Root, home, workspace string, roots []string) *confine.Guard {
	dirs := []confine.ProtectedDir{{Path: filepath.Join(workspace, ".octet"), Name: "the workspace's .octet"}}
	if home != "" {
		dirs = append(dirs, confine.ProtectedDir{Path: filepath.Join(home, ".octet"), Name: "~/.octet"})
	}
	for i, r := range roots {
		dirs = append(dirs, confine.ProtectedDir{Path: r, Name: "resource root " + strconv.Itoa(i+1)})
	}
	return root.Guard(dirs...)
}
