package docs

// The package renames with renameat2(2), which is Linux's: other systems
// stop here with one readable error (see internal/linuxonly).
import _ "octet.dev/host/internal/linuxonly"
