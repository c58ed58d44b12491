package chat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/internal/provider/edge"
	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/provider"
)

// A provider that never reads a large request fails the
// call with an idle timeout instead of hanging it.
func TestProviderThatNeverReadsTheRequest(t *testing.T) {
	fake, err := fakeprovider.New(fakeprovider.Options{Script: fakeprovider.Script{Turns: []fakeprovider.Turn{{Text: "ok"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fake.InjectFault(fakeprovider.FaultNoRead{})
	p, err := New(Config{BaseURL: fake.BaseURL(fakeprovider.ModeChat), APIKey: testKey,
		HTTPClient: edgetest.Client(t), IdleTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Far more than the loopback socket buffers hold.
	req := provider.Request{Model: "m", Messages: []provider.Message{{Role: provider.RoleUser, Text: strings.Repeat("q", 40<<20)}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = p.Stream(ctx, req)
	var pe *provider.Error
	if !errors.As(err, &pe) || pe.Kind != provider.FailIdleTimeout || !errors.Is(err, edge.ErrIdleTimeout) {
		t.Fatalf("got %v, want an idle timeout", err)
	}
	// The fault is spent: the next request (a small one, so that the
	// fake's decoding it stays far within the idle timeout) is answered.
	req.Messages[0].Text = "q"
	s, err := p.Stream(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sum, _, err := drain(t, s)
	if err != nil || sum.Text != "ok" {
		t.Fatalf("retry: %+v, %v", sum, err)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Fault != "no_read" || reqs[0].Body != nil || reqs[1].Fault != "" {
		t.Errorf("fake saw %d requests: %+v", len(reqs), reqs)
	}
}
