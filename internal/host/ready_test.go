package host

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestNoAnswerBeforeReady: Serve reads the first line at once but answers
// it only once Config.Ready is closed (the binary installs its signal
// handlers meanwhile, so a client that has an answer knows a signal is
// handled).
func TestNoAnswerBeforeReady(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ready := make(chan struct{})
	h := New(Config{In: inR, Out: outW, Version: "test", Ready: ready})
	served := make(chan error, 1)
	go func() { served <- h.Serve(context.Background()) }()
	lines := make(chan string, 4)
	go func() {
		r := bufio.NewReader(outR)
		for {
			l, err := r.ReadString('\n')
			if err != nil {
				close(lines)
				return
			}
			lines <- l
		}
	}()

	// The pipe's write returns once Serve has read the line.
	if _, err := io.WriteString(inW, `{"protocol_version":1,"request_id":"h","command":"hello"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-lines:
		t.Fatalf("answered before Ready was closed: %s", l)
	case <-time.After(100 * time.Millisecond):
	}
	close(ready)
	select {
	case l := <-lines:
		if !strings.Contains(l, `"type":"hello"`) {
			t.Fatalf("first line %s, want the hello answer", l)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer after Ready was closed")
	}
	inW.Close()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
