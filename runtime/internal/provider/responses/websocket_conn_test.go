package responses

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/internal/nofollow"
	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/provider"
)

// The socket's connection (websocket_conn.go) and its writer: the
// handshake through the Provider's client, answers that must not open a
// socket, pings, and writeText beside the reader.

// A handshake answered with a redirect to another origin is not followed:
// the key and the custom header never reach that origin, the call falls
// back to HTTP (the socket never started), and the POST's redirect is
// refused as over HTTP alone.
func TestWebSocketRedirectNotFollowed(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		w.WriteHeader(http.StatusTeapot)
	}))
	defer other.Close()
	var mu sync.Mutex
	var seen []string
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.Header.Get("Upgrade"))
		mu.Unlock()
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer origin.Close()
	p, err := New(Config{BaseURL: origin.URL + "/v1", APIKey: testKey, Headers: map[string]string{"X-Gateway-Token": "gw-secret-0123456789"},
		Transport: TransportWebSocket, HTTPClient: edgetest.Client(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	_, err = call(t, p, question)
	pe := edgetest.AsProviderError(t, err)
	if pe.Kind != provider.FailHTTPStatus || pe.Status != http.StatusTemporaryRedirect || !strings.Contains(pe.Message, nofollow.Refused) {
		t.Fatalf("%+v", pe)
	}
	mu.Lock()
	defer mu.Unlock()
	if n := elsewhere.Load(); n != 0 || len(seen) != 2 || seen[0] != "GET websocket" || seen[1] != "POST " || p.WebSocket() {
		t.Fatalf("requests at the other origin %d, at the origin %q, websocket %v", n, seen, p.WebSocket())
	}
}

// answerTransport answers a handshake as memTransport does, then lets
// edit change the answer.
type answerTransport struct {
	mem   memTransport
	edit  func(*http.Response)
	posts atomic.Int32
}

func (a *answerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := a.mem.RoundTrip(r)
	if r.Method == http.MethodPost {
		a.posts.Add(1)
	} else if err == nil {
		a.edit(resp)
	}
	return resp, err
}

// A 101 that does not open the socket the client asked for (an extension
// or subprotocol it did not offer, a wrong accept key, no Upgrade header)
// fails the call before anything was sent, as a cut handshake: retried,
// never a fallback to HTTP.
func TestWebSocketHandshakeAnswerRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(http.Header)
		want string
	}{
		{"compression", func(h http.Header) {
			h.Set("Sec-WebSocket-Extensions", "permessage-deflate; server_no_context_takeover; client_no_context_takeover")
		}, "extension"},
		{"subprotocol", func(h http.Header) { h.Set("Sec-WebSocket-Protocol", "chat") }, "subprotocol"},
		{"accept key", func(h http.Header) { h.Set("Sec-WebSocket-Accept", "d3Jvbmc=") }, "bad handshake"},
		{"no upgrade", func(h http.Header) { h.Del("Upgrade") }, "bad handshake"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var fr []byte
			fr = appendFrame(fr, opText, true, []byte(wsAdded))
			fr = appendFrame(fr, opText, true, []byte(wsCompleted))
			at := &answerTransport{mem: memTransport{frames: fr}, edit: func(r *http.Response) { tc.edit(r.Header) }}
			p, err := New(Config{BaseURL: "https://mem.invalid/v1", APIKey: testKey, Transport: TransportWebSocket, HTTPClient: &http.Client{Transport: at}})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			_, err = call(t, p, question)
			pe := edgetest.AsProviderError(t, err)
			if pe.Kind != provider.FailStreamCut || pe.RequestWritten || !strings.Contains(pe.Message, tc.want) {
				t.Fatalf("%+v", pe)
			}
			if !p.WebSocket() || at.posts.Load() != 0 {
				t.Fatalf("fell back to HTTP: websocket %v, posts %d", p.WebSocket(), at.posts.Load())
			}
		})
	}
}

// recordConn is a memConn that keeps what the client writes.
type recordConn struct {
	memConn
	mu sync.Mutex
	w  bytes.Buffer
}

func (c *recordConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Write(p)
}

type recordTransport struct {
	frames []byte
	conn   *recordConn
}

func (rt *recordTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := (&memTransport{frames: rt.frames}).RoundTrip(r)
	if err == nil && resp.StatusCode == http.StatusSwitchingProtocols {
		rt.conn = &recordConn{memConn: *resp.Body.(*memConn)}
		resp.Body = rt.conn
	}
	return resp, err
}

// clientFrame is one frame the client wrote, unmasked.
type clientFrame struct {
	fin     bool
	op      byte
	payload []byte
}

// clientFrames parses the masked frames a client wrote.
func clientFrames(t *testing.T, b []byte) []clientFrame {
	t.Helper()
	var out []clientFrame
	for len(b) > 0 {
		if len(b) < 2 || b[1]&0x80 == 0 {
			t.Fatalf("not a masked frame: % x", b[:min(len(b), 16)])
		}
		f := clientFrame{fin: b[0]&0x80 != 0, op: b[0] & 0x0f}
		n, b2 := uint64(b[1]&0x7f), b[2:]
		switch n {
		case 126:
			n, b2 = uint64(binary.BigEndian.Uint16(b2)), b2[2:]
		case 127:
			n, b2 = binary.BigEndian.Uint64(b2), b2[8:]
		}
		mask, body := b2[:4], b2[4:]
		f.payload = make([]byte, n)
		for i := range f.payload {
			f.payload[i] = body[i] ^ mask[i%4]
		}
		out = append(out, f)
		b = body[n:]
	}
	return out
}

// A ping between a message's fragments is answered with a pong carrying
// its payload; the client's frames are masked, its request message is
// text, and nothing is compressed (RSV1 clear).
func TestWebSocketPingAnsweredRequestFrames(t *testing.T) {
	frag := wsDelta(t, "fragmented")
	var fr []byte
	fr = appendFrame(fr, opText, true, []byte(wsAdded))
	fr = appendFrame(fr, opText, false, frag[:10])
	fr = appendFrame(fr, opPing, true, []byte("are you there"))
	fr = appendFrame(fr, opContinuation, true, frag[10:])
	fr = appendFrame(fr, opText, true, wsDone(t, "fragmented"))
	fr = appendFrame(fr, opText, true, []byte(wsCompleted))
	rt := &recordTransport{frames: fr}
	p, err := New(Config{BaseURL: "https://mem.invalid/v1", APIKey: testKey, Transport: TransportWebSocket, HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if sum, err := call(t, p, question); err != nil || sum.Text != "fragmented" {
		t.Fatalf("%+v %v", sum, err)
	}
	rt.conn.mu.Lock()
	written := bytes.Clone(rt.conn.w.Bytes())
	rt.conn.mu.Unlock()
	var msg []byte
	pongs := 0
	for _, f := range clientFrames(t, written) {
		switch f.op {
		case opText, opContinuation:
			msg = append(msg, f.payload...)
		case 0xA:
			pongs++
			if string(f.payload) != "are you there" {
				t.Fatalf("pong %q", f.payload)
			}
		default:
			t.Fatalf("frame op %#x", f.op)
		}
	}
	if pongs != 1 || !bytes.HasPrefix(msg, []byte(`{"type":"response.create"`)) || written[0]&0x70 != 0 {
		t.Fatalf("pongs %d, message %.40q, first byte %#x", pongs, msg, written[0])
	}
}

// wsServer is a loopback WebSocket server (coder/websocket, as the fake
// provider's) that hands each accepted connection to serve.
func wsServer(t *testing.T, serve func(ctx context.Context, c *websocket.Conn)) *Provider {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(64 << 20)
		serve(r.Context(), c)
	}))
	t.Cleanup(srv.Close)
	p, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: testKey, Transport: TransportWebSocket, HTTPClient: edgetest.Client(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// writeText may be called from several goroutines while another reads
// the socket: every message arrives whole (each is longer than the write
// buffer, so it goes in several frames that must not interleave with
// another message's). A canceled context sends nothing.
func TestWebSocketWriteTextConcurrent(t *testing.T) {
	const writers, each, size = 8, 6, 256 << 10
	got := make(chan string, writers*each+1)
	p := wsServer(t, func(ctx context.Context, c *websocket.Conn) {
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				return
			}
			verdict := fmt.Sprintf("%d bytes of %q", len(data), data[0])
			if typ != websocket.MessageText || len(bytes.Trim(data, string(data[:1]))) != 0 {
				verdict = "mixed message"
			}
			got <- verdict
			if c.Write(ctx, websocket.MessageText, []byte(verdict)) != nil {
				return
			}
		}
	})
	s, refused, err := p.dial(context.Background())
	if err != nil || refused {
		t.Fatal(refused, err)
	}
	defer s.close()
	acks := make(chan string, writers*each+1)
	go func() {
		defer close(acks)
		for {
			_, r, err := s.conn.NextReader()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(r)
			acks <- string(b)
		}
	}()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range writers {
		wg.Go(func() {
			<-start
			for i := range each {
				msg := bytes.Repeat([]byte{byte('a' + w*each + i)}, size)
				if err := s.writeText(context.Background(), msg); err != nil {
					t.Error(err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	seen := map[string]bool{}
	for range writers * each {
		v := <-got
		if v == "mixed message" || seen[v] || !strings.HasPrefix(v, fmt.Sprint(size, " bytes")) {
			t.Fatalf("server got %s (seen %d)", v, len(seen))
		}
		seen[v] = true
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.writeText(canceled, []byte("never")); !errors.Is(err, errNotSent) || !errors.Is(err, context.Canceled) {
		t.Fatalf("canceled write: %v", err)
	}
	if err := s.writeText(context.Background(), []byte("zzzz")); err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != `4 bytes of 'z'` {
		t.Fatalf("after the canceled write the server got %s", v)
	}
	// The reader got the server's answer to each message meanwhile.
	for i := range writers*each + 1 {
		if a, ok := <-acks; !ok || a == "mixed message" {
			t.Fatalf("acknowledgement %d: %q", i, a)
		}
	}
}

// A context that ends while a message is being written (the server does
// not read) closes the socket: the write returns, and so does a read.
func TestWebSocketWriteTextCanceledMidWrite(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	p := wsServer(t, func(ctx context.Context, c *websocket.Conn) {
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	s, refused, err := p.dial(context.Background())
	if err != nil || refused {
		t.Fatal(refused, err)
	}
	defer s.close()
	msg := make([]byte, 48<<20) // more than the loopback's socket buffers
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = s.writeText(ctx, msg)
	if err == nil || errors.Is(err, errNotSent) || time.Since(start) > 10*time.Second {
		t.Fatalf("write: %v after %v", err, time.Since(start))
	}
	if _, _, err := s.conn.NextReader(); err == nil {
		t.Fatal("the socket is still open")
	}
}

// A client with an overall Timeout still opens sockets: the Timeout is not
// applied to the handshake (net/http would not hand the connection over),
// and the socket outlives it.
func TestWebSocketClientTimeout(t *testing.T) {
	fake, p := wsFake(t, []fakeprovider.Turn{{Text: "one"}, {Text: "two"}}, func(c *Config) {
		c.HTTPClient = &http.Client{Transport: edgetest.Client(t).Transport, Timeout: 300 * time.Millisecond}
	})
	if sum, err := call(t, p, question); err != nil || sum.Text != "one" {
		t.Fatalf("%+v %v", sum, err)
	}
	time.Sleep(400 * time.Millisecond)
	if sum, err := call(t, p, question); err != nil || sum.Text != "two" || !p.WebSocket() {
		t.Fatalf("%+v %v", sum, err)
	}
	if hs, msgs, posts := handshakes(fake); len(hs) != 1 || len(msgs) != 2 || posts != 0 {
		t.Fatalf("handshakes %d, messages %d, posts %d", len(hs), len(msgs), posts)
	}
}
