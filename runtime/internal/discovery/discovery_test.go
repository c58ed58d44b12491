package discovery

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

const testKey = "sk-test-0123456789abcdefSECRET"

// testClient returns a client with a transport of its own, whose idle
// connections are closed when the test ends so goleak sees none.
func testClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// serve starts a loopback server and returns its base URL (ending in /v1).
func serve(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// serveJSON serves body at GET /v1/models and 404 elsewhere.
func serveJSON(t *testing.T, body string) string {
	t.Helper()
	return serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	})
}

// stallServer answers nothing until the request is abandoned. When
// partial is not empty, it first sends the headers and that much body.
func stallServer(t *testing.T, partial string) string {
	t.Helper()
	release := make(chan struct{})
	base := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if partial != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(partial))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	// Cleanups run last-in first-out: release the handler, then close.
	t.Cleanup(func() { close(release) })
	return base
}

// refusedURL returns a loopback base URL on which nothing listens.
func refusedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr + "/v1"
}

func discover(t *testing.T, timeout time.Duration, eps ...Endpoint) ([]Model, []Issue) {
	t.Helper()
	ms, is := Discover(context.Background(), testClient(t), eps, timeout)
	for _, i := range is {
		checkMessage(t, i.Message)
	}
	return ms, is
}

// checkMessage asserts the invariants every Issue message keeps.
func checkMessage(t *testing.T, msg string) {
	t.Helper()
	switch {
	case msg == "":
		t.Error("empty issue message")
	case len(msg) > MaxMessageBytes:
		t.Errorf("message is %d bytes, over %d", len(msg), MaxMessageBytes)
	case !utf8.ValidString(msg):
		t.Errorf("message is not valid UTF-8: %q", msg)
	case strings.Contains(msg, testKey), strings.Contains(msg, "SECRET"):
		t.Errorf("message leaks the key: %q", msg)
	case strings.ContainsFunc(msg, isControl):
		t.Errorf("message has control characters: %q", msg)
	}
}

// oneIssue asserts that exactly one issue with code came back and returns it.
func oneIssue(t *testing.T, ms []Model, is []Issue, provider string, code protocol.Code) Issue {
	t.Helper()
	if len(ms) != 0 {
		t.Errorf("models = %v, want none", ms)
	}
	if len(is) != 1 {
		t.Fatalf("issues = %v, want one", is)
	}
	if is[0].Provider != provider || is[0].Code != code {
		t.Fatalf("issue = %+v, want provider %q code %q", is[0], provider, code)
	}
	return is[0]
}

func TestOpenAIShape(t *testing.T) {
	var got http.Header
	var mu sync.Mutex
	base := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = r.Header.Clone()
		mu.Unlock()
		if r.Method != http.MethodGet || r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"object":"list","data":[
			{"id":"gpt-x-mini","object":"model","created":1700000000,"owned_by":"system","permission":[{"allow_view":true}]},
			{"id":"b-model","object":"model","created":1,"owned_by":"org\u0007name","extra":{"nested":[1,2,3]}},
			{"id":"a-model","object":"model"}
		],"has_more":false}`))
	})
	ms, is := discover(t, 0, Endpoint{Provider: "gw", BaseURL: base + "/", APIKey: testKey})
	if len(is) != 0 {
		t.Fatalf("issues = %v", is)
	}
	want := []Model{
		{Provider: "gw", ID: "a-model"},
		{Provider: "gw", ID: "b-model", OwnedBy: "org name"},
		{Provider: "gw", ID: "gpt-x-mini", OwnedBy: "system"},
	}
	if d := cmp.Diff(want, ms); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
	mu.Lock()
	defer mu.Unlock()
	if a := got.Get("Accept"); a != "application/json" {
		t.Errorf("Accept = %q", a)
	}
	if a := got.Get("Authorization"); a != "Bearer "+testKey {
		t.Errorf("Authorization = %q", a)
	}
}

// llama.cpp's server (tools/server) answers /v1/models with the OpenAI list
// plus an Ollama-style "models" array naming the same model.
const llamaCppBody = `{
  "models": [{"name": "gemma-3-4b-it-Q4_K_M.gguf", "model": "gemma-3-4b-it-Q4_K_M.gguf",
    "modified_at": "", "size": "", "digest": "", "type": "model", "description": "",
    "tags": [""], "capabilities": ["completion"], "parameters": "",
    "details": {"parent_model": "", "format": "gguf", "family": "", "families": [""],
      "parameter_size": "", "quantization_level": ""}}],
  "object": "list",
  "data": [{"id": "gemma-3-4b-it-Q4_K_M.gguf", "object": "model", "created": 1746000000,
    "owned_by": "llamacpp",
    "meta": {"vocab_type": 1, "n_vocab": 262144, "n_ctx_train": 131072, "n_embd": 2560,
      "n_params": 3880263168, "size": 2489757856}}]
}`

func TestLlamaCppShape(t *testing.T) {
	base := serveJSON(t, llamaCppBody)
	ms, is := discover(t, 0, Endpoint{Provider: "llama", BaseURL: base})
	if len(is) != 0 {
		t.Fatalf("issues = %v", is)
	}
	want := []Model{{Provider: "llama", ID: "gemma-3-4b-it-Q4_K_M.gguf", OwnedBy: "llamacpp", ContextWindowTokens: 131072}}
	if d := cmp.Diff(want, ms); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
}

func TestVLLMShape(t *testing.T) {
	base := serveJSON(t, `{"object":"list","data":[
		{"id":"Qwen/Qwen2.5-7B-Instruct","object":"model","created":1746000000,"owned_by":"vllm",
		 "root":"Qwen/Qwen2.5-7B-Instruct","parent":null,"max_model_len":32768,
		 "permission":[{"id":"modelperm-1","object":"model_permission","allow_sampling":true}]},
		{"id":"my-lora","object":"model","owned_by":"vllm","root":"/adapters/my-lora",
		 "parent":"Qwen/Qwen2.5-7B-Instruct","max_model_len":null}]}`)
	ms, is := discover(t, 0, Endpoint{Provider: "vllm", BaseURL: base})
	if len(is) != 0 {
		t.Fatalf("issues = %v", is)
	}
	want := []Model{
		{Provider: "vllm", ID: "Qwen/Qwen2.5-7B-Instruct", OwnedBy: "vllm", ContextWindowTokens: 32768},
		{Provider: "vllm", ID: "my-lora", OwnedBy: "vllm"},
	}
	if d := cmp.Diff(want, ms); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
}

func TestOllamaShape(t *testing.T) {
	base := serveJSON(t, `{"object":"list","data":[
		{"id":"qwen2.5-coder:7b","object":"model","created":1745000000,"owned_by":"library"},
		{"id":"llama3.2:latest","object":"model","created":1744000000,"owned_by":"library"},
		{"id":"hf.co/bartowski/Phi-4-GGUF:Q4_K_M","object":"model","created":1743000000,"owned_by":"hf.co"}]}`)
	ms, is := discover(t, 0, Endpoint{Provider: "ollama", BaseURL: base})
	if len(is) != 0 {
		t.Fatalf("issues = %v", is)
	}
	want := []Model{
		{Provider: "ollama", ID: "hf.co/bartowski/Phi-4-GGUF:Q4_K_M", OwnedBy: "hf.co"},
		{Provider: "ollama", ID: "llama3.2:latest", OwnedBy: "library"},
		{Provider: "ollama", ID: "qwen2.5-coder:7b", OwnedBy: "library"},
	}
	if d := cmp.Diff(want, ms); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
}

func TestUnauthorizedScrubsKey(t *testing.T) {
	masked := testKey[:6] + "*****************" + testKey[len(testKey)-6:]
	tests := []struct {
		name, contentType, body string
		want                    string // in the message
	}{
		{"openai envelope", "application/json",
			`{"error":{"message":"Incorrect API key provided: ` + testKey + `. You can find your API key at https://example.com.","type":"invalid_request_error","code":"invalid_api_key"}}`,
			"HTTP 401 Unauthorized: Incorrect API key provided: [redacted]. You can find"},
		{"masked echo", "application/json",
			`{"error":{"message":"Incorrect API key provided: ` + masked + `.","type":"invalid_request_error"}}`,
			"Incorrect API key provided: [redacted]"},
		{"string error", "application/json", `{"error":"Unauthorized: Bearer ` + testKey + `"}`,
			"HTTP 401 Unauthorized: Unauthorized: Bearer [redacted]"},
		{"fastapi detail", "application/json", `{"detail":"bad token ` + testKey + `"}`, "bad token [redacted]"},
		{"plain text", "text/plain", "invalid key\n" + testKey + "\r\n", "HTTP 401 Unauthorized: invalid key [redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				w.Header().Set("WWW-Authenticate", "Bearer "+r.Header.Get("Authorization"))
				w.WriteHeader(http.StatusUnauthorized)
				_, _ = w.Write([]byte(tt.body))
			})
			ms, is := discover(t, 0, Endpoint{Provider: "p", BaseURL: base, APIKey: testKey})
			i := oneIssue(t, ms, is, "p", protocol.CodeDiscoveryFailed)
			if !strings.Contains(i.Message, tt.want) || !strings.HasPrefix(i.Message, "GET "+base+"/models: ") {
				t.Errorf("message = %q, want it to start with GET %s/models and contain %q", i.Message, base, tt.want)
			}
		})
	}
}

func TestUnescapedKeyEchoIsScrubbed(t *testing.T) {
	// A key with characters that URL escaping changes, echoed escaped.
	const key = "abc/def+ghi=SECRET=="
	base := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = fmt.Fprintf(w, "raw=%s query=%s", key, "abc%2Fdef%2Bghi%3DSECRET%3D%3D")
	})
	_, is := discover(t, 0, Endpoint{Provider: "p", BaseURL: base, APIKey: key})
	if len(is) != 1 || strings.Contains(is[0].Message, "SECRET") {
		t.Fatalf("issues = %v", is)
	}
}

func TestErrorMessageBounded(t *testing.T) {
	long := strings.Repeat("é", 50_000)
	base := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"message":"` + long + testKey + `"}}`))
	})
	_, is := discover(t, 0, Endpoint{Provider: "p", BaseURL: base, APIKey: testKey})
	if len(is) != 1 || !strings.HasSuffix(is[0].Message, "…") || !strings.Contains(is[0].Message, "HTTP 500") {
		t.Fatalf("issues = %v", is)
	}
}

func TestHTMLErrorPage(t *testing.T) {
	base := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte("<html><body><h1>502 Bad Gateway</h1><hr>nginx</body></html>"))
	})
	ms, is := discover(t, 0, Endpoint{Provider: "p", BaseURL: base})
	i := oneIssue(t, ms, is, "p", protocol.CodeDiscoveryFailed)
	if want := "GET " + base + "/models: HTTP 502 Bad Gateway"; i.Message != want {
		t.Errorf("message = %q, want %q", i.Message, want)
	}
}

func TestTimeout(t *testing.T) {
	for _, tt := range []struct{ name, partial string }{
		{"before headers", ""},
		{"mid body", `{"object":"list","data":[{"id":"a"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := stallServer(t, tt.partial)
			ms, is := discover(t, 100*time.Millisecond, Endpoint{Provider: "slow", BaseURL: base, APIKey: testKey})
			i := oneIssue(t, ms, is, "slow", protocol.CodeDiscoveryTimeout)
			if !strings.Contains(i.Message, "no complete answer within 100ms") {
				t.Errorf("message = %q", i.Message)
			}
		})
	}
}

func TestClientTimeoutIsATimeout(t *testing.T) {
	base := stallServer(t, "")
	c := testClient(t)
	c.Timeout = 50 * time.Millisecond
	ms, is := Discover(context.Background(), c, []Endpoint{{Provider: "slow", BaseURL: base}}, time.Minute)
	oneIssue(t, ms, is, "slow", protocol.CodeDiscoveryTimeout)
}

func TestRefused(t *testing.T) {
	base := refusedURL(t)
	ms, is := discover(t, 0, Endpoint{Provider: "down", BaseURL: base, APIKey: testKey})
	i := oneIssue(t, ms, is, "down", protocol.CodeDiscoveryFailed)
	if !strings.HasPrefix(i.Message, "GET "+base+"/models: ") || !strings.Contains(i.Message, "refused") {
		t.Errorf("message = %q", i.Message)
	}
}

func TestInvalidBody(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"garbage", "this is not json", "not valid JSON"},
		{"truncated", `{"object":"list","data":[{"id":"a"`, "not valid JSON"},
		{"html", "<!doctype html><html><body>LM Studio</body></html>", "not valid JSON"},
		{"empty", "", "empty"},
		{"empty object", "{}", `no "data" array`},
		{"null data", `{"object":"list","data":null}`, `no "data" array`},
		{"data not array", `{"object":"list","data":{"id":"a"}}`, "not an array"},
		{"string", `"models"`, "not a JSON object"},
		{"no usable ids", `{"data":[{"object":"model"},{"id":42},{"id":""},"x",null]}`, "no entry has a usable model id"},
		{"error envelope with 200", `{"error":{"message":"boom"}}`, `no "data" array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_, _ = w.Write([]byte(tt.body))
			})
			ms, is := discover(t, 0, Endpoint{Provider: "p", BaseURL: base})
			i := oneIssue(t, ms, is, "p", protocol.CodeDiscoveryInvalid)
			if !strings.Contains(i.Message, tt.want) || !strings.Contains(i.Message, "Content-Type text/html") {
				t.Errorf("message = %q, want it to contain %q and the content type", i.Message, tt.want)
			}
		})
	}
}

// padded returns a valid model list of exactly n bytes.
func padded(n int) []byte {
	const head, tail = `{"object":"list","data":[{"id":"big","object":"model"}]`, `}`
	b := []byte(head + strings.Repeat(" ", n-len(head)-len(tail)) + tail)
	return b
}

func TestBodyLimit(t *testing.T) {
	tests := []struct {
		name          string
		size          int
		contentLength bool
		wantCode      protocol.Code
	}{
		{"at limit", MaxBodyBytes, true, ""},
		{"over limit, declared", MaxBodyBytes + 1, true, protocol.CodeDiscoveryInvalid},
		{"over limit, chunked", MaxBodyBytes + 1, false, protocol.CodeDiscoveryInvalid},
		{"far over limit, chunked", 3 * MaxBodyBytes, false, protocol.CodeDiscoveryInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := padded(tt.size)
			base := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.contentLength {
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				}
				_, _ = w.Write(body)
			})
			ms, is := discover(t, 5*time.Second, Endpoint{Provider: "p", BaseURL: base})
			if tt.wantCode == "" {
				if len(is) != 0 || len(ms) != 1 || ms[0].ID != "big" {
					t.Fatalf("models = %v, issues = %v", ms, is)
				}
				return
			}
			i := oneIssue(t, ms, is, "p", tt.wantCode)
			if !strings.Contains(i.Message, strconv.Itoa(MaxBodyBytes)) {
				t.Errorf("message = %q", i.Message)
			}
		})
	}
}

func TestConcurrentEndpointsAreIndependent(t *testing.T) {
	// The three healthy servers answer only once all three requests have
	// arrived, which happens only if Discover queries them concurrently.
	const healthy = 3
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	barrier := func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		if arrived++; arrived == healthy {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return true
		case <-r.Context().Done():
			return false
		}
	}
	healthyServer := func(ids ...string) string {
		return serve(t, func(w http.ResponseWriter, r *http.Request) {
			if !barrier(w, r) {
				return
			}
			var b strings.Builder
			b.WriteString(`{"object":"list","data":[`)
			for i, id := range ids {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(&b, `{"id":%q,"owned_by":%q}`, id, r.Host)
			}
			b.WriteString(`]}`)
			_, _ = w.Write([]byte(b.String()))
		})
	}
	zeta, alpha, mid := healthyServer("z2", "z1"), healthyServer("a1"), healthyServer("shared", "m1")
	garbage := serveJSON(t, "garbage")
	failing := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	host := func(base string) string { return strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/v1") }

	eps := []Endpoint{
		{Provider: "zeta", BaseURL: zeta},
		{Provider: "bad-json", BaseURL: garbage},
		{Provider: "alpha", BaseURL: alpha, APIKey: testKey},
		{Provider: "down", BaseURL: refusedURL(t)},
		{Provider: "mid", BaseURL: mid},
		{Provider: "err", BaseURL: failing},
		{Provider: "", BaseURL: "not a url"},
	}
	ms, is := discover(t, 5*time.Second, eps...)
	want := []Model{
		{Provider: "alpha", ID: "a1", OwnedBy: host(alpha)},
		{Provider: "mid", ID: "m1", OwnedBy: host(mid)},
		{Provider: "mid", ID: "shared", OwnedBy: host(mid)},
		{Provider: "zeta", ID: "z1", OwnedBy: host(zeta)},
		{Provider: "zeta", ID: "z2", OwnedBy: host(zeta)},
	}
	if d := cmp.Diff(want, ms); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
	var codes []string
	for _, i := range is {
		codes = append(codes, i.Provider+":"+string(i.Code))
	}
	wantCodes := []string{":discovery_failed", "bad-json:discovery_invalid", "down:discovery_failed", "err:discovery_failed"}
	if d := cmp.Diff(wantCodes, codes); d != "" {
		t.Errorf("issues (-want +got):\n%s\n%v", d, is)
	}
}

func TestBearerOnlyWithKey(t *testing.T) {
	tests := []struct{ key, want string }{
		{"", ""},
		{testKey, "Bearer " + testKey},
		{"  " + testKey + "\t", "Bearer " + testKey},
		{"   ", ""},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.key), func(t *testing.T) {
			var auth []string
			var mu sync.Mutex
			base := serve(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				auth = r.Header.Values("Authorization")
				mu.Unlock()
				_, _ = w.Write([]byte(`{"data":[{"id":"m"}]}`))
			})
			ms, is := discover(t, 0, Endpoint{Provider: "p", BaseURL: base, APIKey: tt.key})
			if len(is) != 0 || len(ms) != 1 {
				t.Fatalf("models = %v, issues = %v", ms, is)
			}
			mu.Lock()
			defer mu.Unlock()
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if d := cmp.Diff(want, auth); d != "" {
				t.Errorf("Authorization (-want +got):\n%s", d)
			}
		})
	}
}

func TestKeyWithControlCharacterIsNotSent(t *testing.T) {
	var hits int
	var mu sync.Mutex
	base := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	})
	key := "sk-SECRET\r\nX-Injected: 1"
	ms, is := discover(t, 0, Endpoint{Provider: "p", BaseURL: base, APIKey: key})
	i := oneIssue(t, ms, is, "p", protocol.CodeDiscoveryFailed)
	if strings.Contains(i.Message, "Injected") {
		t.Errorf("message = %q", i.Message)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 {
		t.Errorf("server saw %d requests", hits)
	}
}

func TestBadBaseURL(t *testing.T) {
	for _, base := range []string{
		"", "localhost:8080/v1", "ftp://host/v1", "http:///v1", "http://user:pw@host/v1",
		"http://host/v1?key=" + testKey, "http://host/v1#frag", "http://host/ v1", "mailto:x@y",
	} {
		t.Run(base, func(t *testing.T) {
			ms, is := discover(t, 0, Endpoint{Provider: "p", BaseURL: base, APIKey: testKey})
			i := oneIssue(t, ms, is, "p", protocol.CodeDiscoveryFailed)
			if !strings.Contains(i.Message, "base URL") {
				t.Errorf("message = %q", i.Message)
			}
		})
	}
}

func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The server cancels the caller's context once the request is in flight.
	base := serve(t, func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	})
	ms, is := Discover(ctx, testClient(t), []Endpoint{{Provider: "p", BaseURL: base}}, time.Minute)
	i := oneIssue(t, ms, is, "p", protocol.CodeDiscoveryFailed)
	if !strings.Contains(i.Message, "canceled") {
		t.Errorf("message = %q", i.Message)
	}
}

func TestDuplicatesMerged(t *testing.T) {
	a := serveJSON(t, `{"data":[{"id":"m","owned_by":""},{"id":"m","max_model_len":8192},{"id":"n"}],
		"models":[{"model":"m","name":"m"},{"name":"only-in-models"}]}`)
	b := serveJSON(t, `{"data":[{"id":"m","owned_by":"second"},{"id":"o"}]}`)
	ms, is := discover(t, 0, Endpoint{Provider: "same", BaseURL: a}, Endpoint{Provider: "same", BaseURL: b})
	if len(is) != 0 {
		t.Fatalf("issues = %v", is)
	}
	want := []Model{
		{Provider: "same", ID: "m", OwnedBy: "second", ContextWindowTokens: 8192},
		{Provider: "same", ID: "n"},
		{Provider: "same", ID: "o"},
		{Provider: "same", ID: "only-in-models"},
	}
	if d := cmp.Diff(want, ms); d != "" {
		t.Errorf("models (-want +got):\n%s", d)
	}
}

func TestEmptyListIsNoIssue(t *testing.T) {
	base := serveJSON(t, `{"object":"list","data":[]}`)
	ms, is := discover(t, 0, Endpoint{Provider: "p", BaseURL: base})
	if len(ms) != 0 || len(is) != 0 {
		t.Fatalf("models = %v, issues = %v", ms, is)
	}
}

func TestNoEndpoints(t *testing.T) {
	ms, is := Discover(context.Background(), nil, nil, 0)
	if ms != nil || is != nil {
		t.Fatalf("models = %v, issues = %v", ms, is)
	}
}
