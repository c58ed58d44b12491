package main

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// watchReaderGone calls gone when out is a pipe or a socket whose reader
// went away (poll reports POLLERR or POLLHUP on it), checking every 250 ms
// until stop is closed. Without it an idle RPC mode, which writes nothing,
// would notice only at its next write. Other kinds of output (a file, a
// terminal) are not watched.
func watchReaderGone(out *os.File, stop <-chan struct{}, gone func()) {
	fi, err := out.Stat()
	if err != nil || fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return
	}
	rc, err := out.SyscallConn()
	if err != nil {
		return
	}
	for {
		select {
		case <-stop:
			return
		default:
		}
		var revents int16
		var perr error
		if err := rc.Control(func(fd uintptr) {
			pfd := []unix.PollFd{{Fd: int32(fd)}}
			_, perr = unix.Poll(pfd, 250)
			revents = pfd[0].Revents
		}); err != nil {
			return
		}
		if perr != nil && !errors.Is(perr, unix.EINTR) {
			return
		}
		if revents&(unix.POLLERR|unix.POLLHUP) != 0 {
			gone()
			return
		}
	}
}
