//go:build !unix

package main

// The kit needs Unix process groups; on other systems the build stops here
// with one readable error (see internal/linuxonly).
import _ "octet.dev/host/internal/linuxonly"
