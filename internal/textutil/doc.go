// Package textutil cuts text at UTF-8 character boundaries: the one place
// the host bounds a message, a name quoted in an error or a chunk of
// output without splitting a character. It is a leaf of the module and
// allocates only where it appends the ellipsis.
package textutil
