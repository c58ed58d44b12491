package sysfile

import (
	"os"
	"path/filepath"
	"testing"
)

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestTryLock: a second open file description of the same file, in the
// same process, is refused until the first unlocks or closes.
func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	a, b := open(t, path), open(t, path)
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("first TryLock = %v, %v; want true, nil", ok, err)
	}
	if ok, err := TryLock(b); ok || err != nil {
		t.Fatalf("second TryLock = %v, %v; want false, nil", ok, err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if ok, err := TryLock(b); !ok || err != nil {
		t.Fatalf("TryLock after Unlock = %v, %v; want true, nil", ok, err)
	}
	b.Close()
	if ok, err := TryLock(a); !ok || err != nil {
		t.Fatalf("TryLock after the holder closed = %v, %v; want true, nil", ok, err)
	}
}

func TestClosedFile(t *testing.T) {
	f := open(t, filepath.Join(t.TempDir(), "x.lock"))
	f.Close()
	if ok, err := TryLock(f); ok || err == nil {
		t.Fatalf("TryLock on a closed file = %v, %v; want an error", ok, err)
	}
}
