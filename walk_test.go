package octethost

import (
	"io/fs"
	"path/filepath"
	"testing"
)

// repoFiles returns the path of every file of the checkout, relative to
// the root, in lexical order, leaving out the directories no check reads:
// .git, node_modules, and the build outputs dist and bin. The tests that
// scan the tree (citations, issue numbers, file sizes) share this walk.
func repoFiles(t *testing.T) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "dist", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		paths = append(paths, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return paths
}
