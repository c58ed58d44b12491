package store

import (
	"os"

	"golang.org/x/sys/unix"

	"octet.dev/host/runtime/internal/sysfile"
)

// syncData makes f's data and size durable. fdatasync suffices: it also
// flushes the metadata needed to read the data back, including the size.
func syncData(f *os.File) error {
	err := sysfile.WithFD(f, func(fd int) error {
		for {
			if err := unix.Fdatasync(fd); err != unix.EINTR {
				return err
			}
		}
	})
	if err != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
	}
	return nil
}
