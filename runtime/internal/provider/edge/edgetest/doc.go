// Package edgetest holds the test machinery the provider packages (chat,
// responses, messages) share: loopback servers, stream draining, fixture
// framing and the assertions on *provider.Error. Only tests import it.
package edgetest
