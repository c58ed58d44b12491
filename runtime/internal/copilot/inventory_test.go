package copilot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"octet.dev/host/runtime/internal/copilot/copilottest"
)

const inventoryMix = `{"object":"list","data":[
 {"id":"claude-sonnet-4","name":"Claude Sonnet 4","supported_endpoints":["/v1/messages","/chat/completions"],"capabilities":{"type":"chat","limits":{"max_context_window_tokens":200000,"max_output_tokens":16000},"supports":{"tool_calls":true,"vision":true}}},
 {"id":"gpt-5","name":"GPT-5","supported_endpoints":["/responses","ws:/responses"],"capabilities":{"type":"chat","limits":{"max_prompt_tokens":128000,"max_output_tokens":64000},"supports":{"tool_calls":true,"reasoning_effort":["low","high"]}}},
 {"id":"gpt-4o","name":"GPT-4o","capabilities":{"type":"chat","limits":{"max_context_window_tokens":128000,"max_output_tokens":4096}}},
 {"id":"claude-only","name":"Messages only","supported_endpoints":["/v1/messages"],"capabilities":{"type":"chat"}},
 {"id":"gpt-5-named-but-chat","name":"x","supported_endpoints":["/v1/chat/completions"],"capabilities":{"type":"chat"}},
 {"id":"blocked","name":"Disabled","policy":{"state":"disabled"},"capabilities":{"type":"chat"}},
 {"id":"terms","name":"Terms","policy":{"state":"unconfigured","terms":"accept"},"capabilities":{"type":"chat"}},
 {"id":"embed","name":"Embeddings","supported_endpoints":["/embeddings"],"capabilities":{"type":"embeddings"}}
]}`

func inventoryWorld(t *testing.T, inv func(n int64) (int, string)) (*copilottest.World, *Provider, *atomic.Int64) {
	w, c := copilottest.NewWorld(t), copilottest.NewClock()
	var ex, n atomic.Int64
	w.Handle("api.github.com", "/copilot_internal/v2/token", tokenHandler(&ex, canarySession, 1500, `,"endpoints":{"api":"https://api.individual.githubcopilot.com"}`))
	w.Handle("api.individual.githubcopilot.com", "/models", func(rw http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+canarySession || r.Header.Get("Copilot-Integration-Id") != testIdentity.IntegrationID {
			rw.WriteHeader(401)
			return
		}
		st, body := inv(n.Add(1))
		rw.WriteHeader(st)
		io.WriteString(rw, body)
	})
	return w, newProvider(w, newMemHost(), c), &n
}

func TestInventoryMix(t *testing.T) {
	_, p, _ := inventoryWorld(t, func(int64) (int, string) { return 200, inventoryMix })
	tb, err := p.RegisterModels(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Protocol{}
	for _, m := range tb.Models {
		got[m.ID] = m.Protocol
	}
	want := map[string]Protocol{"claude-sonnet-4": ProtocolOpenAiChat, "gpt-5": ProtocolOpenAiResponses, "gpt-4o": ProtocolOpenAiChat, "gpt-5-named-but-chat": ProtocolOpenAiChat}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("routable %v, want %v", got, want)
	}
	un := map[string]bool{}
	for _, m := range tb.Unroutable {
		un[m.ID] = true
	}
	if !un["claude-only"] || !un["terms"] || un["blocked"] || un["embed"] || len(un) != 2 {
		t.Fatalf("unroutable %v", un)
	}
	if m, _ := tb.Lookup("claude-sonnet-4"); !m.Vision || m.ContextWindowTokens != 200000 {
		t.Fatalf("%+v", m)
	}
	if m, _ := tb.Lookup("gpt-5"); !m.Reasoning || m.ContextWindowTokens != 192000 {
		t.Fatalf("%+v", m)
	}
	if p.Table() != tb {
		t.Fatal("not published")
	}
}

func TestFailingSecondInventoryKeepsTable(t *testing.T) {
	for name, second := range map[string]struct {
		st   int
		body string
	}{
		"500":        {500, `{"error":"x"}`},
		"truncated":  {200, inventoryMix[:len(inventoryMix)/2]},
		"invalid id": {200, `{"data":[{"id":"bad id!","capabilities":{"type":"chat"}}]}`},
		"duplicate":  {200, `{"data":[{"id":"a","capabilities":{"type":"chat"}},{"id":"a","capabilities":{"type":"chat"}}]}`},
	} {
		t.Run(name, func(t *testing.T) {
			_, p, _ := inventoryWorld(t, func(n int64) (int, string) {
				if n == 1 {
					return 200, inventoryMix
				}
				return second.st, second.body
			})
			first, err := p.RegisterModels(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			snapshot := fmt.Sprintf("%#v", *first)
			var wg sync.WaitGroup
			stop := make(chan struct{})
			for range 4 { // concurrent readers never see a half table
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						select {
						case <-stop:
							return
						default:
						}
						if tb := p.Table(); tb == nil || len(tb.Models) != 4 {
							t.Error("a reader saw another table")
							return
						}
					}
				}()
			}
			var rerr *RegisterError
			if _, err := p.RegisterModels(context.Background(), nil); !errors.As(err, &rerr) {
				t.Errorf("the second registration succeeded: %v", err)
			}
			close(stop)
			wg.Wait()
			if p.Table() != first || fmt.Sprintf("%#v", *p.Table()) != snapshot {
				t.Fatal("the first table changed")
			}
		})
	}
}

func TestRegisterCollision(t *testing.T) {
	_, p, _ := inventoryWorld(t, func(int64) (int, string) { return 200, inventoryMix })
	_, err := p.RegisterModels(context.Background(), func(id string) bool { return id == "gpt-5" })
	var rerr *RegisterError
	if !errors.As(err, &rerr) || rerr.Stage != "collision" || p.Table() != nil {
		t.Fatalf("got %v", err)
	}
	if !strings.Contains(err.Error(), "gpt-5") {
		t.Fatal(err)
	}
}

func TestRegisterNotLoggedIn(t *testing.T) {
	w, p, n := inventoryWorld(t, func(int64) (int, string) { return 200, inventoryMix })
	p.Host.(*GitHub).Login.(*memHost).cred = nil
	if _, err := p.RegisterModels(context.Background(), nil); !errors.Is(err, ErrNotLoggedIn) {
		t.Fatalf("got %v", err)
	}
	if n.Load() != 0 || w.Hits("api.github.com") != 0 {
		t.Fatal("requests without a login")
	}
}

// TestRegisterCanceledInFlight: a cancel while the exchange or the
// inventory request is in flight keeps context.Canceled through the error
// scrubbing.
func TestRegisterCanceledInFlight(t *testing.T) {
	for _, stage := range []string{"exchange", "inventory"} {
		t.Run(stage, func(t *testing.T) {
			w, p, _ := inventoryWorld(t, func(int64) (int, string) { return 200, inventoryMix })
			release := make(chan struct{}) // the handler returns before the server closes
			t.Cleanup(func() { close(release) })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			arrived := make(chan struct{}, 1)
			block := func(rw http.ResponseWriter, r *http.Request) {
				arrived <- struct{}{}
				select {
				case <-r.Context().Done():
				case <-release:
				}
			}
			if stage == "exchange" {
				w.Handle("api.github.com", "/copilot_internal/v2/token", block)
			} else {
				w.Handle("api.individual.githubcopilot.com", "/models", block)
			}
			go func() { <-arrived; cancel() }()
			_, err := p.RegisterModels(ctx, nil)
			var re *RegisterError
			if !errors.As(err, &re) || re.Stage != stage || !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v; want a %s RegisterError matching context.Canceled", err, stage)
			}
		})
	}
}
