package responses

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"octet.dev/host/runtime/internal/media"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"octet.dev/host/runtime/fakeprovider"
	"octet.dev/host/runtime/internal/provider/edge/edgetest"
	"octet.dev/host/runtime/provider"
)

// imageStream writes an SSE stream with one generated image of n bytes to
// w, in the API's shape: partial image, output_item.done with the result,
// response.completed repeating it. The image is generated as it is
// written, never held whole. It returns the image's digest.
func imageStream(w io.Writer, n int, seed uint64) string {
	h := sha256.New()
	image := func(dst io.Writer, hash bool) {
		enc := base64.NewEncoder(base64.StdEncoding, dst)
		r := rand.New(rand.NewPCG(seed, seed))
		chunk := make([]byte, 32<<10)
		first := true
		for left := n; left > 0; left -= len(chunk) {
			c := chunk[:min(len(chunk), left)]
			for i := range c {
				c[i] = byte(r.Uint32())
			}
			if first {
				copy(c, "\x89PNG\r\n\x1a\n")
				first = false
			}
			if hash {
				h.Write(c)
			}
			enc.Write(c)
		}
		enc.Close()
	}
	io.WriteString(w, "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\"}}\n\n")
	io.WriteString(w, "event: response.image_generation_call.partial_image\ndata: {\"type\":\"response.image_generation_call.partial_image\",\"output_index\":0,\"item_id\":\"ig_1\",\"partial_image_index\":0,\"partial_image_b64\":\"")
	image(w, false)
	io.WriteString(w, "\"}\n\n")
	io.WriteString(w, "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"id\":\"ig_1\",\"type\":\"image_generation_call\",\"status\":\"completed\",\"output_format\":\"webp\",\"result\":\"")
	image(w, true)
	io.WriteString(w, "\"}}\n\n")
	io.WriteString(w, "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[{\"id\":\"ig_1\",\"type\":\"image_generation_call\",\"status\":\"completed\",\"result\":\"")
	image(w, false)
	io.WriteString(w, "\"}],\"usage\":{\"input_tokens\":5,\"output_tokens\":7,\"total_tokens\":12}}}\n\n")
	return hex.EncodeToString(h.Sum(nil))
}

// decodeImage decodes a generated stream of an n-byte image into dir and
// returns the media reported and the bytes allocated meanwhile.
func decodeImage(t testing.TB, dir string, n int) ([]*provider.OutputMedia, string, uint64) {
	pr, pw := io.Pipe()
	digest := make(chan string, 1)
	go func() { digest <- imageStream(pw, n, 9); pw.Close() }()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := decodeStream(pr, 0)
	d.SetSpoolDir(dir)
	d.SetOutputLimit(provider.OutputLimit(0))
	var got []*provider.OutputMedia
	for d.Next() {
		if ev := d.Event(); ev.Kind == provider.EventMedia {
			got = append(got, ev.Media)
		}
	}
	d.Release()
	runtime.ReadMemStats(&after)
	if d.Err() != nil || !d.Finished() {
		t.Fatalf("decode: %v", d.Err())
	}
	return got, <-digest, after.TotalAlloc - before.TotalAlloc
}

// A 20 MiB generated image (27 MiB of base64 on one line, sent three
// times: partial, result, duplicate) is decoded with a few MiB of
// allocation in all: the target is a peak RSS of at most 40 MiB while it
// streams in (measured on the built host by BenchmarkImage20MiBRSS in
// cmd/octet-host), and no buffer ever holds the image.
func TestImage20MiBMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 80 MiB")
	}
	dir := t.TempDir()
	got, digest, alloc := decodeImage(t, dir, 20<<20)
	if len(got) != 1 || got[0].SHA256 != digest || got[0].Bytes != 20<<20 || got[0].MIMEType != "image/png" {
		t.Fatalf("media %+v, want digest %s", got, digest)
	}
	if alloc > 8<<20 {
		t.Fatalf("decoding allocated %d MiB, want at most 8", alloc>>20)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || filepath.Join(dir, entries[0].Name()) != got[0].Spool {
		t.Fatalf("spool folder holds %v", entries)
	}
	t.Logf("20 MiB image: %.1f MiB allocated", float64(alloc)/(1<<20))
}

// BenchmarkImage20MiB reports what decoding a 20 MiB generated image
// allocates (alloc-MiB, the bound on the heap's growth) and its speed.
func BenchmarkImage20MiB(b *testing.B) {
	dir := b.TempDir()
	var alloc uint64
	for b.Loop() {
		got, _, a := decodeImage(b, dir, 20<<20)
		alloc = max(alloc, a)
		os.Remove(got[0].Spool)
	}
	b.SetBytes(3 * 20 << 20 * 4 / 3)
	b.ReportMetric(float64(alloc)/(1<<20), "alloc-MiB")
}

// The output_format an item declares is not believed, a result only in
// response.completed (nothing streamed) is read from there, a failed
// generation reports nothing, and invalid base64 fails the stream
// without leaving a file.
func TestImageDecoding(t *testing.T) {
	jpeg := "\xff\xd8\xff\xe0 jpeg bytes"
	b64 := base64.StdEncoding.EncodeToString([]byte(jpeg))
	run := func(stream string) ([]*provider.OutputMedia, error, []os.DirEntry) {
		dir := t.TempDir()
		d := decodeStream(strings.NewReader(stream), 0)
		d.SetSpoolDir(dir)
		var got []*provider.OutputMedia
		for d.Next() {
			if ev := d.Event(); ev.Kind == provider.EventMedia {
				got = append(got, ev.Media)
			}
		}
		err := d.Err()
		d.Release()
		entries, _ := os.ReadDir(dir)
		return got, err, entries
	}
	done := `{"type":"response.completed","response":{"id":"r","status":"completed","output":[{"type":"image_generation_call","status":"completed","output_format":"png","result":"` + b64 + `"}]}}`
	got, err, entries := run("data: " + done + "\n\n")
	if err != nil || len(got) != 1 || got[0].MIMEType != "image/jpeg" || len(entries) != 1 {
		t.Fatalf("completed only: %+v %v %v", got, err, entries)
	}
	failed := `{"type":"response.output_item.done","output_index":0,"item":{"type":"image_generation_call","status":"failed"}}`
	got, err, entries = run("data: " + failed + "\n\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n")
	if err != nil || len(got) != 0 || len(entries) != 0 {
		t.Fatalf("failed generation: %+v %v %v", got, err, entries)
	}
	bad := `{"type":"response.output_item.done","output_index":0,"item":{"type":"image_generation_call","status":"completed","result":"` + strings.Repeat("QUJD", 100<<10) + `*"}}`
	got, err, entries = run("data: " + bad + "\n\n")
	var pe *provider.Error
	if len(got) != 0 || len(entries) != 0 || !errors.As(err, &pe) || pe.Kind != provider.FailDecode || !strings.Contains(pe.Message, "generated image") {
		t.Fatalf("invalid base64: %+v %v %v", got, err, entries)
	}
	// The "result" of an item that is not an image is not an image.
	other := `{"type":"response.output_item.done","output_index":0,"item":{"type":"mystery_call","result":"` + strings.Repeat("not base64! ", 30<<10) + `"}}`
	got, err, entries = run("data: " + other + "\n\ndata: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"}}\n\n")
	if err != nil || len(got) != 0 || len(entries) != 0 {
		t.Fatalf("other result: %+v %v %v", got, err, entries)
	}
	// In a long response.completed read for its output (nothing was
	// streamed), each image item gets its own result, whatever other
	// "result" members come first.
	long := base64.StdEncoding.EncodeToString([]byte(jpeg + strings.Repeat("x", 300<<10)))
	both := `{"type":"response.completed","response":{"status":"completed","output":[{"type":"mystery_call","result":"` + strings.Repeat("?", 1000) +
		`"},{"type":"image_generation_call","status":"completed","result":"` + long + `"}]}}`
	got, err, entries = run("data: " + both + "\n\n")
	if err != nil || len(got) != 1 || got[0].MIMEType != "image/jpeg" || got[0].Bytes != int64(len(jpeg)+300<<10) || len(entries) != 1 {
		t.Fatalf("completed with two results: %+v %v %v", got, err, entries)
	}
	// A response may generate at most media.MaxOutputImages images: the
	// next one fails the stream (the consumer drops the ones it got).
	var many strings.Builder
	for i := range media.MaxOutputImages + 1 {
		fmt.Fprintf(&many, "data: {\"type\":\"response.output_item.done\",\"output_index\":%d,\"item\":{\"type\":\"image_generation_call\",\"status\":\"completed\",\"result\":\"%s\"}}\n\n", i, b64)
	}
	got, err, _ = run(many.String())
	if len(got) != media.MaxOutputImages || !errors.As(err, &pe) || pe.Kind != provider.FailDecode || !strings.Contains(pe.Message, "more than") {
		t.Fatalf("%d images: %d reported, %v", media.MaxOutputImages+1, len(got), err)
	}
	// A cut inside the long line leaves no file either.
	got, err, entries = run("data: " + bad[:300<<10])
	if len(got) != 0 || len(entries) != 0 || err == nil {
		t.Fatalf("cut: %+v %v %v", got, err, entries)
	}
}

// Over the WebSocket transport a generated image of 1 MiB (one message
// past the event bound) is spooled the same way, and a call answered
// without images leaves the folder empty.
func TestImageOverWebSocket(t *testing.T) {
	img := append([]byte("GIF89a"), strings.Repeat("pixels", 200<<10)...)
	_, p := wsFake(t, []fakeprovider.Turn{{Images: []fakeprovider.Image{{Data: img, Partials: [][]byte{img[:1000]}}}, Text: "ok"}}, nil)
	dir := t.TempDir()
	req := question
	req.SpoolDir = dir
	sum, err := call(t, p, req)
	if err != nil || len(sum.Media) != 1 || sum.Text != "ok" {
		t.Fatalf("%+v %v", sum, err)
	}
	m := sum.Media[0]
	want := sha256.Sum256(img)
	got, _ := os.ReadFile(m.Spool)
	if m.MIMEType != "image/gif" || m.SHA256 != hex.EncodeToString(want[:]) || string(got) != string(img) || filepath.Dir(m.Spool) != dir {
		t.Fatalf("media %+v", m)
	}
	if !p.WebSocket() {
		t.Fatal("the call fell back to HTTP")
	}
}

// wsImageFrames is imageStream's stream of an n-byte image as WebSocket
// frames, one message per event, and the image's digest; without
// created, the first message is the long partial image.
func wsImageFrames(n int, created bool) ([]byte, string) {
	var sse strings.Builder
	digest := imageStream(&sse, n, 5)
	fr := serverFrames([]byte(sse.String()))
	if !created {
		// The first frame is response.created, short: a 2-byte header.
		fr = fr[2+int(fr[1]):]
	}
	return fr, digest
}

// Over the WebSocket transport a message past the long-event threshold is
// decoded as it is read, never held whole: a 4 MiB image (three 5.3 MiB
// messages) is spooled with far less allocation than one message, also
// when the long message is the first (read ahead to look for a
// connection-limit refusal).
func TestImageOverWebSocketStreams(t *testing.T) {
	const n = 4 << 20
	for _, created := range []bool{true, false} {
		fr, digest := wsImageFrames(n, created)
		p := memWS(t, fr)
		dir := t.TempDir()
		req := question
		req.SpoolDir = dir
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		sum, err := call(t, p, req)
		runtime.ReadMemStats(&after)
		if err != nil || len(sum.Media) != 1 || sum.Media[0].SHA256 != digest || sum.Media[0].Bytes != n {
			t.Fatalf("created %v: %+v %v", created, sum, err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
			t.Fatalf("created %v: the call allocated %.1f MiB, want at most 2 (a message is %.1f MiB)",
				created, float64(alloc)/(1<<20), float64(n*4/3)/(1<<20))
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Fatalf("created %v: spool folder holds %v", created, entries)
		}
	}
}

// A long message cut by the socket's end or past the read limit fails the
// call (a cut; undecodable) and leaves no spool file behind.
func TestImageOverWebSocketCut(t *testing.T) {
	fr, _ := wsImageFrames(1<<20, true)
	for _, tc := range []struct {
		name  string
		limit int64
		cut   int
		kind  provider.FailKind
		msg   string
	}{
		{"cut", 0, len(fr) / 2, provider.FailStreamCut, "WebSocket closed before response.completed"},
		{"read limit", 1 << 20, len(fr), provider.FailDecode, "larger than the event bound"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := memWS(t, fr[:tc.cut])
			dir := t.TempDir()
			req := question
			req.SpoolDir = dir
			s, err := p.Stream(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if tc.limit > 0 {
				s.(*wsStream).s.setReadLimit(tc.limit)
			}
			for s.Next() {
				if ev := s.Event(); ev.Kind == provider.EventMedia {
					t.Fatalf("media %+v", ev.Media)
				}
			}
			pe := edgetest.AsProviderError(t, s.Err())
			if pe.Kind != tc.kind || !pe.RequestWritten || !strings.Contains(pe.Message, tc.msg) {
				t.Fatalf("%+v", pe)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Fatalf("spool folder holds %v", entries)
			}
		})
	}
}
