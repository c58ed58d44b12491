// Package sysfile holds the file system calls the session store and the
// Codex credential store share: the advisory locks (flock(2)) that guard a
// session's <name>.lock and the credential lock, the fsync of a directory
// that makes a rename in it durable, and access to a file's descriptor.
// It is a leaf.
//
// flock locks belong to the open file description, so a second open of the
// same lock file in this process conflicts just as another process does.
package sysfile
