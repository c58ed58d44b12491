package client

import (
	"errors"
	"reflect"
	"testing"

	"octet.dev/host/protocol"
)

func TestEventDecodeTyped(t *testing.T) {
	ev := Event{Type: protocol.TypeToolFinish, Data: []byte(`{"call_id":"c1","tool":"bash","ok":false,"output":"","truncated":false,"error":{"code":"timed_out","message":"m"},"exit_code":-1,"signal":"SIGKILL","added_later":[1]}`)}
	data, err := ev.Decode()
	if err != nil {
		t.Fatal(err)
	}
	fin, ok := data.(*protocol.ToolFinish)
	if !ok {
		t.Fatalf("Decode = %T, want *protocol.ToolFinish", data)
	}
	if fin.CallID != "c1" || fin.Error == nil || fin.Error.Code != protocol.CodeTimedOut || fin.ExitCode == nil || *fin.ExitCode != -1 {
		t.Errorf("Decode = %+v", fin)
	}
}

// TestEventDecodeEveryType decodes an empty object for every type of the
// registry: each gets its own payload type.
func TestEventDecodeEveryType(t *testing.T) {
	for _, e := range protocol.Events() {
		data, err := Event{Type: e.Type, Data: []byte(`{}`)}.Decode()
		if err != nil {
			t.Errorf("%s: %v", e.Type, err)
			continue
		}
		if got := reflect.TypeOf(data); got != reflect.PointerTo(e.Payload) {
			t.Errorf("%s: Decode = %v, want *%v", e.Type, got, e.Payload)
		}
	}
}

func TestEventDecodeErrors(t *testing.T) {
	_, err := Event{Type: "from_a_newer_host", Data: []byte(`{}`)}.Decode()
	if !errors.Is(err, ErrUnknownEventType) {
		t.Errorf("unknown type: %v, want ErrUnknownEventType", err)
	}
	for _, data := range []string{`{"step":"one"}`, `[]`, `{"step":1`} {
		if _, err := (Event{Type: protocol.TypeModelDelta, Data: []byte(data)}).Decode(); err == nil || errors.Is(err, ErrUnknownEventType) {
			t.Errorf("model_delta %s: %v, want a decoding error", data, err)
		}
	}
}
