package responses

import (
	"testing"

	"octet.dev/host/runtime/internal/provider/providertest"
	"octet.dev/host/runtime/provider"
)

// A history with a repeated or malformed tool-call id (written before the
// host assigned ids) is sent with unique, well-formed ids, each result
// answering its own call.
func TestRequestMakesCallIDsUnique(t *testing.T) {
	providertest.CheckCallIDsUnique(t, func(req provider.Request) ([]byte, error) { return buildRequest(req, requestOptions{}) })
}
