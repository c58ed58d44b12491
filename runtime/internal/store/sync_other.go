//go:build unix && !linux

package store

import "os"

// syncData makes f's data and size durable. os.File.Sync uses F_FULLFSYNC
// on Darwin, which is what durability needs there.
func syncData(f *os.File) error { return f.Sync() }
