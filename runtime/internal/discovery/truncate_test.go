package discovery

import (
	"octet.dev/host/protocol"

	"strconv"
	"strings"
	"testing"
	"time"
)

// An endpoint listing more than MaxModelsPerEndpoint models gives the
// first ones and a discovery_truncated issue counting the others.
func TestLongListIsTruncated(t *testing.T) {
	const n = MaxModelsPerEndpoint + 777
	var b strings.Builder
	b.WriteString(`{"object":"list","data":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"id":"m` + strconv.Itoa(100000+i) + `"}`)
	}
	b.WriteString(`]}`)
	base := serveJSON(t, b.String())
	ms, is := discover(t, 5*time.Second, Endpoint{Provider: "p", BaseURL: base})
	if len(ms) != MaxModelsPerEndpoint || ms[0].ID != "m100000" || ms[len(ms)-1].ID != "m"+strconv.Itoa(100000+MaxModelsPerEndpoint-1) {
		t.Fatalf("%d models, first %v", len(ms), ms[:1])
	}
	if len(is) != 1 || is[0].Code != protocol.CodeDiscoveryTruncated || is[0].Omitted != 777 || !strings.HasPrefix(is[0].Message, "777 more models were left out") {
		t.Fatalf("issues %+v", is)
	}
}
