package client

import (
	"context"
	"fmt"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"octet.dev/host/protocol"
)

// handshake sends hello and validates the answer.
func (c *Client) handshake(ctx context.Context) (protocol.Hello, error) {
	cl := &call{command: protocol.CommandHello}
	v, err := c.roundTrip(ctx, cl, func(id string) ([]byte, error) {
		return marshalLine(newEnvelope(id, protocol.CommandHello))
	})
	if err != nil {
		return protocol.Hello{}, err
	}
	ha := v.(helloAnswer)
	return ha.Hello, validateHello(ha, c.cfg)
}

// helloAnswer is the decoded data of a hello event. Features keeps every
// flag, known to protocol.Features or not, for Config.RequireFeatures.
type helloAnswer struct {
	Hello    protocol.Hello
	Features map[string]jsontext.Value
}

func validateHello(ha helloAnswer, cfg Config) error {
	h := ha.Hello
	bad := func(field, reason string) error { return &HandshakeError{Field: field, Reason: reason, Hello: h} }
	if h.ProtocolVersion != protocol.Version {
		return bad("protocol_version", fmt.Sprintf("got %d, want 1", h.ProtocolVersion))
	}
	if h.MaxFrameBytes != protocol.MaxFrameBytes {
		return bad("max_frame_bytes", fmt.Sprintf("got %d, want %d", h.MaxFrameBytes, protocol.MaxFrameBytes))
	}
	if h.MaxConcurrentRuns < 1 {
		return bad("max_concurrent_runs", fmt.Sprintf("got %d, want at least 1", h.MaxConcurrentRuns))
	}
	for _, want := range protocol.Commands() {
		found := false
		for _, got := range h.Commands {
			found = found || got == want
		}
		if !found {
			return bad("commands", "missing "+strconv.Quote(want))
		}
	}
	flag := func(name string) string {
		v, ok := ha.Features[name]
		if !ok {
			return "absent"
		}
		return string(v)
	}
	if got := flag("process_group_abort"); got != "true" {
		return bad("features.process_group_abort", "got "+got+", want true")
	}
	if got := flag("in_band_abort"); got != "false" {
		return bad("features.in_band_abort", "got "+got+", want false")
	}
	if cfg.ExpectedSDKVersion != "" && h.SDKVersion != cfg.ExpectedSDKVersion {
		return bad("sdk_version", fmt.Sprintf("got %q, want %q", h.SDKVersion, cfg.ExpectedSDKVersion))
	}
	for _, name := range cfg.RequireFeatures {
		if got := flag(name); got != "true" {
			return bad("features."+name, "required feature is "+got+", want true")
		}
	}
	return nil
}
