package testbin

// The builds are guarded with flock(2): a non-Linux build stops here with
// one readable error (see internal/linuxonly).
import _ "octet.dev/host/internal/linuxonly"
