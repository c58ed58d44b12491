package client

import (
	"io"
	"sync"
)

// ring keeps the last len(buf) bytes written to it. It is safe for
// concurrent use.
type ring struct {
	mu    sync.Mutex
	buf   []byte
	start int // index of the oldest byte
	n     int // bytes held
}

func newRing(size int) *ring { return &ring{buf: make([]byte, size)} }

// Write appends p, dropping the oldest bytes beyond the capacity. It never
// fails.
func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	size := len(r.buf)
	written := len(p)
	if size == 0 {
		return written, nil
	}
	if len(p) >= size {
		copy(r.buf, p[len(p)-size:])
		r.start, r.n = 0, size
		return written, nil
	}
	end := (r.start + r.n) % size
	k := copy(r.buf[end:], p)
	copy(r.buf, p[k:])
	r.n += len(p)
	if r.n > size {
		r.start = (r.start + r.n - size) % size
		r.n = size
	}
	return written, nil
}

// String returns the retained bytes, oldest first.
func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]byte, 0, r.n)
	end := r.start + r.n
	if end <= len(r.buf) {
		return string(append(out, r.buf[r.start:end]...))
	}
	out = append(out, r.buf[r.start:]...)
	return string(append(out, r.buf[:end-len(r.buf)]...))
}

// drain copies src into r until src fails (EOF or closed), then closes done.
func (r *ring) drain(src io.Reader, done chan<- struct{}) {
	defer close(done)
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}
