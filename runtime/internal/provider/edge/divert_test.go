package edge

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"octet.dev/host/runtime/internal/sse"
)

// Divert moves the named members' strings, unescaped, to their sinks and
// keeps everything else, whatever the read sizes.
func TestDivert(t *testing.T) {
	in := `{"type":"response.output_item.done","output_index":0,"item":{"id":"ig_1","type":"image_generation_call",` +
		`"result":"QUJD\/REVG\u0047","note":"keep \"result\" here","partial_image_b64":"` + strings.Repeat("A", 100000) + `"},"x":[1,"result",{"result":""}]}`
	want := `{"type":"response.output_item.done","output_index":0,"item":{"id":"ig_1","type":"image_generation_call",` +
		`"result":"#0","note":"keep \"result\" here","partial_image_b64":"#1"},"x":[1,"result",{"result":"#2"}]}`
	var bufs []*bytes.Buffer
	var keys, types []string
	skel, err := Divert(iotest.HalfReader(strings.NewReader(in)), []string{"result", "partial_image_b64"}, 1<<10,
		func(key string, typ []byte) (io.Writer, string, error) {
			types = append(types, string(typ))
			keys = append(keys, key)
			bufs = append(bufs, new(bytes.Buffer))
			return bufs[len(bufs)-1], "#" + strconv.Itoa(len(bufs)-1), nil
		})
	if err != nil {
		t.Fatal(err)
	}
	if string(skel) != want {
		t.Fatalf("skeleton\n%s\nwant\n%s", skel, want)
	}
	if strings.Join(keys, ",") != "result,partial_image_b64,result" || bufs[0].String() != "QUJD/REVGG" ||
		bufs[1].String() != strings.Repeat("A", 100000) || bufs[2].Len() != 0 {
		t.Fatalf("diverted %q", keys)
	}
	if types[0] != "response.output_item.done" {
		t.Fatalf("type %q", types)
	}
	// The skeleton is bounded; sink errors and cut input end it.
	if _, err := Divert(strings.NewReader(`{"a":"`+strings.Repeat("b", 2000)+`"}`), nil, 1<<10, nil); !errors.Is(err, sse.ErrEventTooLarge) {
		t.Fatalf("bound: %v", err)
	}
	boom := errors.New("boom")
	if _, err := Divert(strings.NewReader(`{"result":"x"}`), []string{"result"}, 1<<10, func(string, []byte) (io.Writer, string, error) { return nil, "", boom }); !errors.Is(err, boom) {
		t.Fatalf("sink: %v", err)
	}
	if _, err := Divert(strings.NewReader(`{"result":"xx`), []string{"result"}, 1<<10, func(string, []byte) (io.Writer, string, error) { return io.Discard, "", nil }); err == nil {
		t.Fatal("cut inside a string")
	}
	if _, err := Divert(strings.NewReader(strings.Repeat("[", 100)), nil, 1<<10, nil); !errors.Is(err, errDivertDepth) {
		t.Fatalf("depth: %v", err)
	}
}
