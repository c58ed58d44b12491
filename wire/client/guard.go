//go:build !unix

package client

// The client needs Unix process groups; on other systems the build stops
// here with one readable error (see internal/linuxonly).
import _ "octet.dev/host/internal/linuxonly"
