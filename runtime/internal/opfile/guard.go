package opfile

// The package uses Linux system calls; on other systems the build stops
// here with one readable error (see internal/linuxonly).
import _ "octet.dev/host/internal/linuxonly"
