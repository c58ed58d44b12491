package edge

import (
	"errors"
	"io"
	"testing"

	"octet.dev/host/runtime/internal/sse"
	"octet.dev/host/runtime/provider"
)

func TestQueue(t *testing.T) {
	var q Queue
	if q.Pop() || !q.Drained() || q.Started() {
		t.Fatal("a new queue is empty and not started")
	}
	q.Add(provider.StreamEvent{Kind: provider.EventUsage})
	if q.Started() || q.Drained() {
		t.Error("Add marks no content, and leaves an event to deliver")
	}
	q.Push(provider.StreamEvent{Kind: provider.EventText, Text: "a"})
	if !q.Started() {
		t.Error("Push marks content")
	}
	var got []provider.EventKind
	for q.Pop() {
		got = append(got, q.Event().Kind)
	}
	if len(got) != 2 || got[0] != provider.EventUsage || got[1] != provider.EventText || !q.Drained() {
		t.Errorf("delivered %v", got)
	}
	// The storage is reused after draining.
	q.Add(provider.StreamEvent{Kind: provider.EventFinish})
	if !q.Pop() || q.Event().Kind != provider.EventFinish || cap(q.events) < 2 {
		t.Errorf("refill: %+v, cap %d", q.Event(), cap(q.events))
	}
	var fresh Queue
	fresh.MarkStarted()
	if !fresh.Started() {
		t.Error("MarkStarted")
	}
}

func TestReadFailure(t *testing.T) {
	err := ReadFailure(sse.ErrEventTooLarge, 42)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.FailDecode || pe.Message != "stream event larger than 42 bytes" ||
		!pe.RequestWritten || !errors.Is(err, sse.ErrEventTooLarge) {
		t.Errorf("too large: %#v", err)
	}
	err = ReadFailure(io.ErrUnexpectedEOF, 42)
	if errors.As(err, &pe) || !errors.Is(err, io.ErrUnexpectedEOF) || err.Error() != io.ErrUnexpectedEOF.Error() {
		t.Errorf("read error: %#v", err)
	}
}

func TestNewSSEBound(t *testing.T) {
	if _, n := NewSSE(nil, 0); n != sse.DefaultMaxEventBytes {
		t.Errorf("zero bound: %d", n)
	}
	if _, n := NewSSE(nil, 7); n != 7 {
		t.Errorf("bound 7: %d", n)
	}
}
