package store

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

func TestFileName(t *testing.T) {
	long := strings.Repeat("a", 128)
	dots := strings.Repeat(".", 128)
	tests := []struct {
		id, want string
	}{
		{"customer-42", "customer-42.jsonl"},
		{"A_z-09", "A_z-09.jsonl"},
		{".", "~2e.jsonl"},
		{"..", "~2e~2e.jsonl"},
		{"a.b", "a~2eb.jsonl"},
		{"a:b", "a~3ab.jsonl"},
		{"run:1.2", "run~3a1~2e2.jsonl"},
		{"a.jsonl", "a~2ejsonl.jsonl"},
		{long, long + ".jsonl"},
		// 128 dots escape to 384 bytes, past NAME_MAX: compact form.
		{dots, compactPrefix + compactEnc().EncodeToString([]byte(dots)) + ".jsonl"},
	}
	for _, tt := range tests {
		got, err := FileName(tt.id)
		if err != nil || got != tt.want {
			t.Errorf("FileName(%q) = %q, %v; want %q", tt.id, got, err, tt.want)
		}
		if back, err := idFromFileName(got); err != nil || back != tt.id {
			t.Errorf("idFromFileName(%q) = %q, %v; want %q", got, back, err, tt.id)
		}
	}
}

func TestFileNameInvalid(t *testing.T) {
	for _, id := range []string{"", "a/b", "/", "a\\b", "a b", "~", "a~2e", "a\x00", "é", "a\n", strings.Repeat("x", 129)} {
		if got, err := FileName(id); !errors.Is(err, ErrInvalidID) {
			t.Errorf("FileName(%q) = %q, %v; want ErrInvalidID", id, got, err)
		}
	}
	if err := ValidateID(strings.Repeat("x", 128)); err != nil {
		t.Errorf("128-byte id: %v", err)
	}
}

const idAlphabet = "abcXYZ019-_.:"

// genID draws valid IDs, weighted towards '.' and ':' so that both the
// readable and the compact form occur.
func genID() *rapid.Generator[string] {
	chars := []rune(idAlphabet + strings.Repeat(".:", 4) + "ABCDEFGHIJKLMNOPQRSTUVWxyz2345678")
	return rapid.Custom(func(t *rapid.T) string {
		n := rapid.OneOf(rapid.IntRange(1, 4), rapid.IntRange(1, MaxIDLen)).Draw(t, "len")
		var b strings.Builder
		for range n {
			b.WriteRune(rapid.SampledFrom(chars).Draw(t, "c"))
		}
		return b.String()
	})
}

func checkName(t *rapid.T, id, name string) {
	if strings.ContainsAny(name, "/\x00") || name == "." || name == ".." || strings.HasPrefix(name, ".") {
		t.Fatalf("FileName(%q) = %q is unsafe", id, name)
	}
	if len(name)+len(lockSuffix) > 255 {
		t.Fatalf("FileName(%q) = %q: %d bytes with the lock suffix, past NAME_MAX", id, name, len(name)+len(lockSuffix))
	}
	if !strings.HasSuffix(name, fileSuffix) {
		t.Fatalf("FileName(%q) = %q lacks %s", id, name, fileSuffix)
	}
	if strings.Count(name, ".") != 1 {
		t.Fatalf("FileName(%q) = %q has a '.' besides the suffix", id, name)
	}
}

func TestFileNameProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := genID().Draw(t, "a")
		b := genID().Draw(t, "b")
		na, err := FileName(a)
		if err != nil {
			t.Fatalf("FileName(%q): %v", a, err)
		}
		nb, err := FileName(b)
		if err != nil {
			t.Fatalf("FileName(%q): %v", b, err)
		}
		checkName(t, a, na)
		checkName(t, b, nb)
		if (a == b) != (na == nb) {
			t.Fatalf("FileName(%q) = %q, FileName(%q) = %q", a, na, b, nb)
		}
		// The inverse exists, so the mapping is injective.
		if back, err := idFromFileName(na); err != nil || back != a {
			t.Fatalf("idFromFileName(%q) = %q, %v; want %q", na, back, err, a)
		}
		// No session file name is another session's lock or temporary file.
		if na+lockSuffix == nb || na+tmpSuffix == nb {
			t.Fatalf("%q and %q collide", na, nb)
		}
	})
}

func TestNewID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewID()
		if err := ValidateID(id); err != nil {
			t.Fatalf("NewID() = %q: %v", id, err)
		}
		if len(id) != 29 {
			t.Fatalf("NewID() = %q, want 29 bytes", id)
		}
		if seen[id] {
			t.Fatalf("NewID() repeated %q", id)
		}
		seen[id] = true
	}
	if a, b := NewID(), NewID(); a[:12] > b[:12] {
		t.Errorf("time prefix went backwards: %q then %q", a, b)
	}
}

// TestNewIDAcrossProcesses: processes started one after the other, each
// making its first ID, draw different random digits (the source is seeded
// per process, not fixed).
func TestNewIDAcrossProcesses(t *testing.T) {
	seen := map[string]bool{}
	for range 8 {
		out, err := childCmd(t, "newid", "", "").Output()
		if err != nil {
			t.Fatal(err)
		}
		id := strings.TrimSpace(string(out))
		if err := ValidateID(id); err != nil || len(id) != 29 {
			t.Fatalf("child's NewID() = %q (%v)", id, err)
		}
		if seen[id[13:]] {
			t.Fatalf("two processes drew the random digits %q", id[13:])
		}
		seen[id[13:]] = true
	}
}

func FuzzFileName(f *testing.F) {
	for _, s := range []string{"a", ".", "..", "a.b", "a:b", strings.Repeat(":", 128), "a/b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		name, err := FileName(id)
		if ValidateID(id) != nil {
			if !errors.Is(err, ErrInvalidID) {
				t.Fatalf("FileName(%q) = %q, %v; want ErrInvalidID", id, name, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(name, "/") || len(name)+len(lockSuffix) > 255 {
			t.Fatalf("FileName(%q) = %q", id, name)
		}
		if back, err := idFromFileName(name); err != nil || back != id {
			t.Fatalf("round trip %q -> %q -> %q, %v", id, name, back, err)
		}
	})
}
