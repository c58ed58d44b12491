package confine

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// guardCase is one protected directory layout and the verdicts on paths.
type guardCase struct {
	name    string
	setup   func(t *testing.T, tmp, ws string) (protected string, wsDir string)
	refused []string
	allowed []string
}

func mkdir(t *testing.T, p string) {
	t.Helper()
	if err := os.MkdirAll(p, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestGuard: a protected directory is refused by identity wherever it lies
// relative to the workspace and however the path spells it; other paths
// pass.
func TestGuard(t *testing.T) {
	cases := []guardCase{
		{
			name: "home inside the workspace, .octet exists",
			setup: func(t *testing.T, tmp, ws string) (string, string) {
				mkdir(t, filepath.Join(ws, "home/user/.octet/credentials"))
				return filepath.Join(ws, "home/user/.octet"), ws
			},
			refused: []string{"home/user/.octet/settings.json", "home/user/.octet", "home/user/.octet/credentials/x.json",
				"home/./user/../user/.octet/settings.json", "home/user/.octet/new/dir/file"},
			allowed: []string{"home/user/notes.txt", "home/user/.octetx/settings.json", "home/settings.json", "."},
		},
		{
			name: "home inside the workspace, .octet missing",
			setup: func(t *testing.T, tmp, ws string) (string, string) {
				mkdir(t, filepath.Join(ws, "home/user"))
				return filepath.Join(ws, "home/user/.octet"), ws
			},
			refused: []string{"home/user/.octet/settings.json", "home/user/.OCTET/settings.json", "home/user/.octet"},
			allowed: []string{"home/user/x", "home/user/octet/settings.json"},
		},
		{
			name: "home inside the workspace, home itself missing",
			setup: func(t *testing.T, tmp, ws string) (string, string) {
				return filepath.Join(ws, "home/user/.octet"), ws
			},
			refused: []string{"home/user/.octet/settings.json", "Home/User/.octet/models.json"},
			allowed: []string{"home/user/x", "home/x/.octet/settings.json"},
		},
		{
			name: "home named through a link into the workspace",
			setup: func(t *testing.T, tmp, ws string) (string, string) {
				mkdir(t, filepath.Join(ws, "real/user"))
				if err := os.Symlink(filepath.Join(ws, "real/user"), filepath.Join(tmp, "homelink")); err != nil {
					t.Fatal(err)
				}
				return filepath.Join(tmp, "homelink/.octet"), ws
			},
			refused: []string{"real/user/.octet/settings.json"},
			allowed: []string{"real/user/settings.json", "homelink/.octet/settings.json"},
		},
		{
			name: "a relative link with .. in the protected path",
			setup: func(t *testing.T, tmp, ws string) (string, string) {
				mkdir(t, filepath.Join(ws, "a/b"))
				mkdir(t, filepath.Join(tmp, "x"))
				if err := os.Symlink("../ws/a/b", filepath.Join(tmp, "x/l")); err != nil {
					t.Fatal(err)
				}
				return tmp + "/x/l/../c/.octet", ws // the link's ..: ws/a/c/.octet (not filepath.Join, which cleans)
			},
			refused: []string{"a/c/.octet/settings.json"},
			allowed: []string{"x/c/.octet/settings.json", "a/b/c/.octet/settings.json"},
		},
		{
			name: "the workspace inside the protected directory",
			setup: func(t *testing.T, tmp, ws string) (string, string) {
				inner := filepath.Join(tmp, "home/.octet/project")
				mkdir(t, inner)
				return filepath.Join(tmp, "home/.octet"), inner
			},
			refused: []string{"anything.txt", "deep/er/file", "."},
		},
		{
			name: "the workspace is the protected directory's parent",
			setup: func(t *testing.T, tmp, ws string) (string, string) {
				mkdir(t, filepath.Join(ws, ".octet"))
				return filepath.Join(ws, ".octet"), ws
			},
			refused: []string{".octet/settings.json", "sub/../.octet/x"},
			allowed: []string{"src/main.go", "octet"},
		},
		{
			name: "the protected directory elsewhere",
			setup: func(t *testing.T, tmp, ws string) (string, string) {
				mkdir(t, filepath.Join(tmp, "home/.octet"))
				mkdir(t, filepath.Join(ws, "home/.octet"))
				return filepath.Join(tmp, "home/.octet"), ws
			},
			allowed: []string{"home/.octet/settings.json", ".octet/settings.json"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tmp := t.TempDir()
			ws := filepath.Join(tmp, "ws")
			mkdir(t, ws)
			protected, wsDir := c.setup(t, tmp, ws)
			r, err := Open(wsDir)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			g := r.Guard(ProtectedDir{Path: protected, Name: "~/.octet"})
			for _, p := range c.refused {
				err := g.Check(p)
				var pe *ProtectedError
				if !errors.Is(err, ErrProtected) || !errors.As(err, &pe) || pe.Dir != "~/.octet" {
					t.Errorf("%s: %v, want a refusal", p, err)
				} else if filepath.IsAbs(pe.Path) {
					t.Errorf("%s: the error names a host path: %v", p, err)
				}
			}
			for _, p := range c.allowed {
				if err := g.Check(p); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
		})
	}
}

// TestGuardBeatsARename: the identity holds when the directory is renamed
// after the guard was made: a protected directory moved inside the
// workspace under another name is still refused.
func TestGuardBeatsARename(t *testing.T) {
	tmp := t.TempDir()
	ws := filepath.Join(tmp, "ws")
	mkdir(t, filepath.Join(ws, "home/.octet"))
	r, err := Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	g := r.Guard(ProtectedDir{Path: filepath.Join(ws, "home/.octet"), Name: "~/.octet"})
	if err := os.Rename(filepath.Join(ws, "home/.octet"), filepath.Join(ws, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	if err := g.Check("elsewhere/settings.json"); !errors.Is(err, ErrProtected) {
		t.Fatalf("renamed: %v", err)
	}
}

func TestGuardNil(t *testing.T) {
	var g *Guard
	if err := g.Check("x"); err != nil {
		t.Fatal(err)
	}
	r, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	// A directory below a file cannot exist: nothing to protect.
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o600)
	if g := r.Guard(ProtectedDir{Path: filepath.Join(f, ".octet"), Name: "x"}, ProtectedDir{Path: "relative", Name: "y"}); len(g.marks) != 0 {
		t.Fatalf("marks %+v", g.marks)
	}
	if err := r.Guard(ProtectedDir{Path: "/nonexistent-root-dir/.octet", Name: "z"}).Check("../x"); !errors.Is(err, ErrEscape) {
		t.Fatalf("escape: %v", err)
	}
}
