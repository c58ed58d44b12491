package opfiletest

// The package makes FIFOs (Linux); on other systems the build stops here
// with one readable error (see internal/linuxonly).
import _ "octet.dev/host/internal/linuxonly"
