package copilot

import "sync/atomic"

// The public package (runtime/copilot) owns the embedder's Provider type
// and keeps this package's *Provider in an unexported field; the façade
// (runtime) hands it to the engine. No public method returns an internal
// type, so the public package registers, once, at its init, the one
// function that opens its Provider, and the façade calls Unwrap. Only
// packages under runtime can import this package, so only they can open a
// public Provider.
var unwrap atomic.Pointer[func(any) *Provider]

// SetUnwrap registers how to open the public package's Provider. It is
// called once, by runtime/copilot's init; a second call panics.
func SetUnwrap(f func(any) *Provider) {
	if f == nil || !unwrap.CompareAndSwap(nil, &f) {
		panic("copilot: SetUnwrap: nil, or called twice")
	}
}

// Unwrap returns the seam inside a public *copilot.Provider, nil for a nil
// one or for any other value.
func Unwrap(v any) *Provider {
	f := unwrap.Load()
	if f == nil || v == nil {
		return nil
	}
	return (*f)(v)
}
