package octethost

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// scanFiles calls visit with the path, relative to the root, and the text
// of every file of the checkout that keep accepts, in lexical order, and
// returns how many it read. It leaves out the directories no check reads:
// .git, node_modules, and the build outputs dist and bin. The tests that
// scan the tree (citations, issue numbers, file sizes) share this walk.
func scanFiles(t *testing.T, keep func(path string) bool, visit func(path, text string)) int {
	t.Helper()
	read := 0
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
		if !keep(path) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		read++
		visit(path, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return read
}
