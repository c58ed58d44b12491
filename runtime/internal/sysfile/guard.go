package sysfile

// The package uses flock(2); on other systems the build stops
// here with one readable error (see internal/linuxonly).
import _ "octet.dev/host/internal/linuxonly"
