package prepare

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"octet.dev/host/runtime/internal/resources"
)

// writeRes writes a file of a resource layer, making its directories.
func writeRes(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// testConfig is an agent's configuration with home as its home, an empty
// environment, no log and a fresh resource cache.
func testConfig(home string) *Config {
	return &Config{Home: home, Getenv: func(string) string { return "" },
		Now: time.Now, Log: slog.New(slog.DiscardHandler), Cache: resources.NewCache()}
}
