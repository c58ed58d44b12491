package edgetest

import (
	"context"
	"io"
	"net/http"
	"testing"

	"octet.dev/host/runtime/provider"
)

// Opener starts a stream, under ctx, from a provider aimed at a loopback
// server that serves h.
type Opener func(t *testing.T, ctx context.Context, h http.HandlerFunc) (provider.Stream, error)

// CheckCancel runs the cancel and close subtests every provider passes:
// firstEvent is a stream whose first event is the text "Hel".
// waitingForHeaders adds the cancel while the server holds the headers.
func CheckCancel(t *testing.T, open Opener, firstEvent string, waitingForHeaders bool) {
	t.Run("mid-stream", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s, err := open(t, ctx, StallAfter(firstEvent))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if !s.Next() || s.Event().Text != "Hel" {
			t.Fatalf("first event: %+v, err %v", s.Event(), s.Err())
		}
		cancel()
		if s.Next() {
			t.Fatalf("Next after cancel returned %+v", s.Event())
		}
		pe := AsProviderError(t, s.Err())
		if pe.Kind != provider.FailCanceled || !pe.RequestWritten || !pe.ContentStarted {
			t.Errorf("got %+v, want FailCanceled, written, started", pe)
		}
	})
	t.Run("before the request", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := open(t, ctx, SSEHandler(nil))
		pe := AsProviderError(t, err)
		if pe.Kind != provider.FailCanceled || pe.RequestWritten {
			t.Errorf("got %+v, want FailCanceled, not written", pe)
		}
	})
	if waitingForHeaders {
		t.Run("while waiting for headers", func(t *testing.T) {
			arrived := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-arrived
				cancel()
			}()
			_, err := open(t, ctx, func(w http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
				close(arrived)
				<-r.Context().Done()
			})
			pe := AsProviderError(t, err)
			if pe.Kind != provider.FailCanceled || !pe.RequestWritten {
				t.Errorf("got %+v, want FailCanceled, written", pe)
			}
		})
	}
	t.Run("close from another goroutine", func(t *testing.T) {
		s, err := open(t, context.Background(), StallAfter(firstEvent))
		if err != nil {
			t.Fatal(err)
		}
		if !s.Next() {
			t.Fatal(s.Err())
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = s.Close()
		}()
		for s.Next() {
		}
		<-done
		if pe := AsProviderError(t, s.Err()); pe.Kind != provider.FailCanceled || !pe.ContentStarted {
			t.Errorf("got %+v, want FailCanceled with content started", pe)
		}
	})
	t.Run("close mid-stream", func(t *testing.T) {
		s, err := open(t, context.Background(), StallAfter(firstEvent))
		if err != nil {
			t.Fatal(err)
		}
		if !s.Next() {
			t.Fatal(s.Err())
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		_ = s.Close()
		if s.Next() {
			t.Fatal("Next after Close returned true")
		}
		if pe := AsProviderError(t, s.Err()); pe.Kind != provider.FailCanceled {
			t.Errorf("got %+v, want FailCanceled", pe)
		}
	})
}
