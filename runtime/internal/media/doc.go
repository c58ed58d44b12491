// Package media reads the typed media inputs of a run (CONTRACT §8, §16):
// each file is opened beneath the workspace descriptor without following
// links, checked with fstat to be a regular file within its cap before a byte
// is read, read from that same descriptor, and its format sniffed from the
// bytes. The bytes are kept as read: what reaches the provider is the
// original file.
package media
