//go:build !linux

package soak

// The soak drives a Linux host through process groups; on other systems
// the build stops here with one readable error (see internal/linuxonly).
import _ "octet.dev/host/internal/linuxonly"
