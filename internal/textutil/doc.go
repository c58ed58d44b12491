// Package textutil cuts text at UTF-8 character boundaries: the one place
// the host bounds a message, a name quoted in an error or a chunk of
// output without splitting a character. It is a leaf of the module and
// allocates only where it appends the ellipsis. It also tells whether a
// server's string has the shape of an error code (IsCode), the test of
// what of an error body the Codex and Copilot logins quote back.
package textutil
