package confine

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fixture builds, in a fresh temporary directory:
//
//	outside/secret.txt, outside/dir/inner.txt   (never to be reached)
//	ws/a.txt, ws/sub/b.txt, ws/sub/deep/c.txt
//	ws/link_out_file     -> ../outside/secret.txt
//	ws/link_out_abs      -> /…/outside/secret.txt
//	ws/link_out_dir      -> ../outside/dir
//	ws/link_in_file      -> a.txt
//	ws/link_in_dir       -> sub
//	ws/sub/link_up       -> ..
//	ws/dangling          -> nope
//
// and returns the temporary directory and the workspace path.
func fixture(t testing.TB) (tmp, ws string) {
	t.Helper()
	tmp = t.TempDir()
	ws = filepath.Join(tmp, "ws")
	out := filepath.Join(tmp, "outside")
	for _, d := range []string{ws, out, filepath.Join(out, "dir"), filepath.Join(ws, "sub", "deep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(out, "secret.txt"):          "SECRET",
		filepath.Join(out, "dir", "inner.txt"):    "INNER SECRET",
		filepath.Join(ws, "a.txt"):                "hello",
		filepath.Join(ws, "sub", "b.txt"):         "bee",
		filepath.Join(ws, "sub", "deep", "c.txt"): "sea",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"link_out_file": "../outside/secret.txt",
		"link_out_abs":  filepath.Join(out, "secret.txt"),
		"link_out_dir":  "../outside/dir",
		"link_in_file":  "a.txt",
		"link_in_dir":   "sub",
		"sub/link_up":   "..",
		"dangling":      "nope",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(ws, name)); err != nil {
			t.Fatal(err)
		}
	}
	return tmp, ws
}

// resolvers runs f once with openat2 and once with the forced openat walk.
func resolvers(t *testing.T, f func(t *testing.T, open func(string) (*Root, error))) {
	t.Run("openat2", func(t *testing.T) {
		if _, err := unix.Openat2(unix.AT_FDCWD, ".", &unix.OpenHow{Flags: unix.O_PATH}); err == unix.ENOSYS {
			t.Skip("kernel has no openat2; the walk subtest covers this host")
		}
		f(t, Open)
	})
	t.Run("walk", func(t *testing.T) {
		f(t, func(dir string) (*Root, error) { return open(dir, true) })
	})
}

// fixtureRoots runs f under each resolver with a fresh fixture: tmp holds
// the workspace ws, opened as r (closed when f returns), and the outside
// tree the links point into.
func fixtureRoots(t *testing.T, f func(t *testing.T, r *Root, tmp, ws string)) {
	resolvers(t, func(t *testing.T, open func(string) (*Root, error)) {
		tmp, ws := fixture(t)
		r, err := open(ws)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		f(t, r, tmp, ws)
	})
}

// checkErr asserts that err is want (nil meaning success) and that its text
// names no host path.
func checkErr(t *testing.T, tmp string, err, want error) {
	t.Helper()
	if want == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if !errors.Is(err, want) {
		t.Fatalf("error = %v, want %v", err, want)
	}
	if strings.Contains(err.Error(), tmp) {
		t.Fatalf("error %q mentions the host path %q", err, tmp)
	}
}

func TestReadConfinement(t *testing.T) {
	fixtureRoots(t, func(t *testing.T, r *Root, tmp, ws string) {
		tests := []struct {
			path string
			want string // content when err is nil
			err  error
		}{
			{path: "a.txt", want: "hello"},
			{path: "./sub/../a.txt", want: "hello"},
			{path: "sub/deep/c.txt", want: "sea"},
			{path: filepath.Join(ws, "sub", "b.txt"), want: "bee"},
			{path: "../outside/secret.txt", err: ErrEscape},
			{path: "sub/../../outside/secret.txt", err: ErrEscape},
			{path: "..", err: ErrEscape},
			{path: filepath.Join(tmp, "outside", "secret.txt"), err: ErrEscape},
			{path: ws + "/../outside/secret.txt", err: ErrEscape},
			{path: "/etc/passwd", err: ErrEscape},
			{path: "link_out_file", err: ErrSymlink},
			{path: "link_out_abs", err: ErrSymlink},
			{path: "link_out_dir/inner.txt", err: ErrSymlink},
			{path: "link_in_file", err: ErrSymlink},
			{path: "link_in_dir/b.txt", err: ErrSymlink},
			{path: "sub/link_up/a.txt", err: ErrSymlink},
			{path: "sub/link_up/link_out_file", err: ErrSymlink},
			{path: "dangling", err: ErrSymlink},
			{path: "missing.txt", err: ErrNotFound},
			{path: "sub/missing/x", err: ErrNotFound},
			{path: "a.txt/x", err: ErrNotDir},
			{path: "sub", err: ErrIsDir},
			{path: ".", err: ErrIsDir},
			{path: "a\x00b", err: ErrInvalidPath},
		}
		for _, tt := range tests {
			got, err := r.ReadFile(tt.path)
			t.Logf("%q: %v", tt.path, err)
			checkErr(t, tmp, err, tt.err)
			if tt.err == nil && string(got) != tt.want {
				t.Errorf("ReadFile(%q) = %q, want %q", tt.path, got, tt.want)
			}
			if strings.Contains(string(got), "SECRET") {
				t.Fatalf("ReadFile(%q) read outside the workspace", tt.path)
			}
		}
	})
}

func TestDirConfinement(t *testing.T) {
	fixtureRoots(t, func(t *testing.T, r *Root, tmp, ws string) {
		tests := []struct {
			path string
			want []string
			err  error
		}{
			{path: "sub", want: []string{"b.txt", "deep/", "link_up@"}},
			{path: "", want: []string{"a.txt", "dangling@", "link_in_dir@", "link_in_file@", "link_out_abs@", "link_out_dir@", "link_out_file@", "sub/"}},
			{path: ws, want: []string{"a.txt", "dangling@", "link_in_dir@", "link_in_file@", "link_out_abs@", "link_out_dir@", "link_out_file@", "sub/"}},
			{path: "link_out_dir", err: ErrSymlink},
			{path: "link_in_dir", err: ErrSymlink},
			{path: "sub/link_up", err: ErrSymlink},
			{path: "sub/link_up/sub", err: ErrSymlink},
			{path: "../outside/dir", err: ErrEscape},
			{path: filepath.Join(tmp, "outside"), err: ErrEscape},
			{path: "a.txt", err: ErrNotDir},
			{path: "nope", err: ErrNotFound},
		}
		for _, tt := range tests {
			ents, err := r.ReadDir(tt.path)
			checkErr(t, tmp, err, tt.err)
			var got []string
			for _, e := range ents {
				got = append(got, e.Name()+suffix(e.Type()))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ReadDir(%q) = %q, want %q", tt.path, got, tt.want)
			}
		}
	})
}

func suffix(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "/"
	case m&fs.ModeSymlink != 0:
		return "@"
	}
	return ""
}

func TestStat(t *testing.T) {
	fixtureRoots(t, func(t *testing.T, r *Root, tmp, ws string) {
		fi, err := r.Stat("sub/b.txt")
		checkErr(t, tmp, err, nil)
		if fi.Name() != "b.txt" || fi.Size() != 3 || !fi.Mode().IsRegular() {
			t.Errorf("Stat(sub/b.txt) = %v %d %v", fi.Name(), fi.Size(), fi.Mode())
		}
		if fi, err := r.Stat("."); err != nil || !fi.IsDir() || fi.Name() != "." {
			t.Errorf("Stat(.) = %v, %v", fi, err)
		}
		_, err = r.Stat("link_in_file")
		checkErr(t, tmp, err, ErrSymlink)
		fi, err = r.Lstat("link_in_file")
		checkErr(t, tmp, err, nil)
		if fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Lstat(link_in_file).Mode() = %v, want a link", fi.Mode())
		}
		fi, err = r.Lstat("link_out_dir")
		checkErr(t, tmp, err, nil)
		if fi.Mode()&fs.ModeSymlink == 0 {
			t.Errorf("Lstat(link_out_dir).Mode() = %v, want a link", fi.Mode())
		}
		_, err = r.Lstat("link_out_dir/inner.txt")
		checkErr(t, tmp, err, ErrSymlink)
		_, err = r.Lstat("../outside")
		checkErr(t, tmp, err, ErrEscape)
		_, err = r.Stat("missing")
		checkErr(t, tmp, err, ErrNotFound)
		if !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("ErrNotFound does not match fs.ErrNotExist")
		}
	})
}

func TestWriteConfinement(t *testing.T) {
	fixtureRoots(t, func(t *testing.T, r *Root, tmp, ws string) {
		tests := []struct {
			path string
			err  error
		}{
			{path: "new.txt"},
			{path: "a.txt"},
			{path: "sub/deep/new.txt"},
			{path: filepath.Join(ws, "abs.txt")},
			{path: "../x", err: ErrEscape},
			{path: "../outside/secret.txt", err: ErrEscape},
			{path: filepath.Join(tmp, "outside", "secret.txt"), err: ErrEscape},
			{path: "link_out_file", err: ErrSymlink},
			{path: "link_out_abs", err: ErrSymlink},
			{path: "link_in_file", err: ErrSymlink},
			{path: "dangling", err: ErrSymlink},
			{path: "link_out_dir/new.txt", err: ErrSymlink},
			{path: "link_out_dir/inner.txt", err: ErrSymlink},
			{path: "link_in_dir/new.txt", err: ErrSymlink},
			{path: "sub/link_up/new.txt", err: ErrSymlink},
			{path: "sub", err: ErrIsDir},
			{path: ".", err: ErrIsDir},
			{path: "missing/new.txt", err: ErrNotFound},
			{path: "a.txt/new.txt", err: ErrNotDir},
		}
		for _, tt := range tests {
			err := r.WriteFileAtomic(tt.path, []byte("WRITTEN"), 0o644)
			checkErr(t, tmp, err, tt.err)
			if tt.err == nil {
				got, err := r.ReadFile(tt.path)
				if err != nil || string(got) != "WRITTEN" {
					t.Errorf("after WriteFileAtomic(%q): %q, %v", tt.path, got, err)
				}
			}
			f, err := r.OpenFile(tt.path, os.O_WRONLY|os.O_CREATE, 0o644)
			if tt.err == nil {
				checkErr(t, tmp, err, nil)
				f.Close()
			} else if tt.err != ErrIsDir {
				checkErr(t, tmp, err, tt.err)
			}
		}
		assertOutsideIntact(t, tmp)
		if _, err := os.Lstat(filepath.Join(ws, "nope")); !os.IsNotExist(err) {
			t.Errorf("a write through the dangling link created its target: %v", err)
		}
		assertNoTemp(t, ws)
	})
}

func TestMkdirAll(t *testing.T) {
	fixtureRoots(t, func(t *testing.T, r *Root, tmp, ws string) {
		tests := []struct {
			path string
			err  error
		}{
			{path: "x/y/z"},
			{path: "x/y/z"},
			{path: "sub/deep"},
			{path: "."},
			{path: "link_out_dir/sub", err: ErrSymlink},
			{path: "link_out_dir", err: ErrSymlink},
			{path: "link_in_dir/new", err: ErrSymlink},
			{path: "dangling/new", err: ErrSymlink},
			{path: "sub/link_up/new", err: ErrSymlink},
			{path: "a.txt/new", err: ErrNotDir},
			{path: "a.txt", err: ErrNotDir},
			{path: "../outside/new", err: ErrEscape},
		}
		for _, tt := range tests {
			err := r.MkdirAll(tt.path)
			checkErr(t, tmp, err, tt.err)
			if tt.err == nil {
				if fi, err := r.Stat(tt.path); err != nil || !fi.IsDir() {
					t.Errorf("after MkdirAll(%q): %v, %v", tt.path, fi, err)
				}
			}
		}
		if _, err := os.Lstat(filepath.Join(ws, "nope")); !os.IsNotExist(err) {
			t.Errorf("MkdirAll through the dangling link created its target: %v", err)
		}
		assertOutsideIntact(t, tmp)
	})
}

func TestWriteFileAtomicKeepsMode(t *testing.T) {
	fixtureRoots(t, func(t *testing.T, r *Root, tmp, ws string) {
		if err := os.Chmod(filepath.Join(ws, "a.txt"), 0o751); err != nil {
			t.Fatal(err)
		}
		checkErr(t, tmp, r.WriteFileAtomic("a.txt", []byte("x"), 0o600), nil)
		fi, err := os.Stat(filepath.Join(ws, "a.txt"))
		if err != nil || fi.Mode().Perm() != 0o751 {
			t.Errorf("mode after replace = %v, %v; want 0751", fi.Mode(), err)
		}
		checkErr(t, tmp, r.WriteFileAtomic("fresh.txt", []byte("x"), 0o600), nil)
		fi, err = os.Stat(filepath.Join(ws, "fresh.txt"))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("mode of a new file = %v, %v; want 0600", fi.Mode(), err)
		}
		assertNoTemp(t, ws)
	})
}

func TestWalk(t *testing.T) {
	resolvers(t, func(t *testing.T, open func(string) (*Root, error)) {
		tmp, ws := fixture(t)
		if err := os.WriteFile(filepath.Join(ws, "sub.txt"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := open(ws)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var got []string
		err = r.Walk(".", func(rel string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			got = append(got, rel+suffix(d.Type()))
			return nil
		})
		checkErr(t, tmp, err, nil)
		want := []string{
			"./", "a.txt", "dangling@", "link_in_dir@", "link_in_file@", "link_out_abs@",
			"link_out_dir@", "link_out_file@", "sub.txt", "sub/", "sub/b.txt", "sub/deep/",
			"sub/deep/c.txt", "sub/link_up@",
		}
		if !slices.Equal(got, want) {
			t.Errorf("Walk = %q\nwant %q", got, want)
		}
		// The visit order is the string order of the paths (directories
		// suffixed by "/"), which grep and find rely on.
		if !slices.IsSorted(got[1:]) {
			t.Errorf("Walk order is not sorted: %q", got)
		}

		got = nil
		err = r.Walk("sub", func(rel string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if rel == "sub/deep" {
				return fs.SkipDir
			}
			got = append(got, rel)
			return nil
		})
		checkErr(t, tmp, err, nil)
		if want := []string{"sub", "sub/b.txt", "sub/link_up"}; !slices.Equal(got, want) {
			t.Errorf("Walk(sub) with SkipDir = %q, want %q", got, want)
		}

		for _, p := range []string{"link_out_dir", "link_in_dir"} {
			got = nil
			err = r.Walk(p, func(rel string, d fs.DirEntry, err error) error {
				got = append(got, rel+suffix(d.Type()))
				return err
			})
			checkErr(t, tmp, err, nil)
			if want := []string{p + "@"}; !slices.Equal(got, want) {
				t.Errorf("Walk(%s) = %q, want %q", p, got, want)
			}
		}
		err = r.Walk("link_out_dir/inner.txt", func(rel string, d fs.DirEntry, err error) error { return err })
		checkErr(t, tmp, err, ErrSymlink)
		err = r.Walk("../outside", func(rel string, d fs.DirEntry, err error) error { return err })
		checkErr(t, tmp, err, ErrEscape)
	})
}

func TestOpen(t *testing.T) {
	tmp, ws := fixture(t)
	if _, err := Open("relative/dir"); !errors.Is(err, ErrWorkspaceRelative) {
		t.Errorf("Open(relative) = %v", err)
	}
	if _, err := Open(filepath.Join(tmp, "missing")); !errors.Is(err, ErrWorkspaceNotFound) {
		t.Errorf("Open(missing) = %v", err)
	}
	if _, err := Open(filepath.Join(ws, "a.txt")); !errors.Is(err, ErrWorkspaceNotDir) {
		t.Errorf("Open(file) = %v", err)
	}
	// A workspace reached through a link is the operator's choice: allowed,
	// and absolute tool paths may use either spelling.
	alias := filepath.Join(tmp, "alias")
	if err := os.Symlink("ws", alias); err != nil {
		t.Fatal(err)
	}
	r, err := Open(alias)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, p := range []string{alias + "/a.txt", ws + "/a.txt"} {
		if rel, err := r.Rel(p); err != nil || rel != "a.txt" {
			t.Errorf("Rel(%q) = %q, %v", p, rel, err)
		}
	}
}

func TestRel(t *testing.T) {
	r := &Root{fd: -1, dirs: []string{"/w/ws"}}
	tests := []struct {
		in, want string
		err      error
	}{
		{in: "", want: "."},
		{in: ".", want: "."},
		{in: "./", want: "."},
		{in: "a", want: "a"},
		{in: "a/", want: "a"},
		{in: "a//b/./c/", want: "a/b/c"},
		{in: "a/../b", want: "b"},
		{in: "a/..", want: "."},
		{in: "...", want: "..."},
		{in: "..a/b", want: "..a/b"},
		{in: `a\..\..\b`, want: `a\..\..\b`},
		{in: "/w/ws", want: "."},
		{in: "/w/ws/", want: "."},
		{in: "/w/ws/a/b", want: "a/b"},
		{in: "//w//ws/a", want: "a"},
		{in: "/w/ws/a/../../ws/b", want: "b"},
		{in: "..", err: ErrEscape},
		{in: "../", err: ErrEscape},
		{in: "../a", err: ErrEscape},
		{in: "a/../../b", err: ErrEscape},
		{in: "a/../..", err: ErrEscape},
		{in: "/w/wsx/a", err: ErrEscape},
		{in: "/w/ws/../x", err: ErrEscape},
		{in: "/w", err: ErrEscape},
		{in: "/", err: ErrEscape},
		{in: "/etc/passwd", err: ErrEscape},
		{in: "a\x00", err: ErrInvalidPath},
	}
	for _, tt := range tests {
		got, err := r.Rel(tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("Rel(%q) = %q, %v; want %v", tt.in, got, err, tt.err)
			}
			if strings.HasPrefix(tt.in, "/") && strings.Contains(err.Error(), tt.in) {
				t.Errorf("Rel(%q) error %q echoes the host path", tt.in, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Rel(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	rootWS := &Root{fd: -1, dirs: []string{"/"}}
	if got, err := rootWS.Rel("/etc/passwd"); err != nil || got != "etc/passwd" {
		t.Errorf("Rel with workspace / = %q, %v", got, err)
	}
}

func FuzzRel(f *testing.F) {
	for _, s := range []string{"", ".", "..", "a/../..", "/w/ws/../ws/a", "/w/ws", "a//b/", "../../etc", "/w/wsx", "a/./../b/.."} {
		f.Add(s)
	}
	r := &Root{fd: -1, dirs: []string{"/w/ws"}}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := r.Rel(p)
		if err != nil {
			if got != "" {
				t.Fatalf("Rel(%q) = %q with error %v", p, got, err)
			}
			return
		}
		// A ".." element is an escape; a name such as "..a" is a legal file
		// name inside the workspace.
		if got == "" || got == ".." || strings.HasPrefix(got, "../") || strings.HasPrefix(got, "/") {
			t.Fatalf("Rel(%q) = %q escapes", p, got)
		}
		if slices.Contains(strings.Split(got, "/"), "..") {
			t.Fatalf("Rel(%q) = %q has a .. element", p, got)
		}
		if filepath.Clean(got) != got {
			t.Fatalf("Rel(%q) = %q is not clean", p, got)
		}
		if strings.IndexByte(got, 0) >= 0 {
			t.Fatalf("Rel(%q) = %q has a NUL", p, got)
		}
	})
}

func assertOutsideIntact(t *testing.T, tmp string) {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(tmp, "outside"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"dir", "secret.txt"}; !slices.Equal(names, want) {
		t.Errorf("outside/ now holds %q", names)
	}
	if ents, _ := os.ReadDir(filepath.Join(tmp, "outside", "dir")); len(ents) != 1 {
		t.Errorf("outside/dir now holds %d entries", len(ents))
	}
	for p, want := range map[string]string{"secret.txt": "SECRET", "dir/inner.txt": "INNER SECRET"} {
		got, err := os.ReadFile(filepath.Join(tmp, "outside", p))
		if err != nil || string(got) != want {
			t.Errorf("outside/%s = %q, %v", p, got, err)
		}
	}
}

func assertNoTemp(t *testing.T, ws string) {
	t.Helper()
	filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".octet-tmp-") {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func TestReadFileInto(t *testing.T) {
	resolvers(t, func(t *testing.T, open func(string) (*Root, error)) {
		tmp, ws := fixture(t)
		if err := unix.Mkfifo(filepath.Join(ws, "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := open(ws)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		buf := make([]byte, 0, 64)
		got, err := r.ReadFileInto("sub/b.txt", buf, 3)
		checkErr(t, tmp, err, nil)
		if string(got) != "bee" || &got[:1][0] != &buf[:1][0] {
			t.Errorf("ReadFileInto = %q (buffer reused: %v)", got, &got[:1][0] == &buf[:1][0])
		}
		_, err = r.ReadFileInto("sub/b.txt", buf, 2)
		checkErr(t, tmp, err, ErrTooLarge)
		got, err = r.ReadFileInto("a.txt", nil, -1)
		checkErr(t, tmp, err, nil)
		if string(got) != "hello" {
			t.Errorf("ReadFileInto(a.txt) = %q", got)
		}
		// A FIFO is refused before any read, so this does not block.
		_, err = r.ReadFile("fifo")
		checkErr(t, tmp, err, ErrNotRegular)
		_, _, err = r.OpenRegular("fifo")
		checkErr(t, tmp, err, ErrNotRegular)
		_, err = r.ReadFileInto("link_out_file", nil, -1)
		checkErr(t, tmp, err, ErrSymlink)
		fi, err := r.Lstat("fifo")
		checkErr(t, tmp, err, nil)
		if fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("Lstat(fifo).Mode() = %v", fi.Mode())
		}
	})
}
