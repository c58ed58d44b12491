package edge

import (
	"encoding/base64"
	"strings"
)

// Base64 returns the standard base64 of data, encoded once into the
// string's own buffer (media run to megabytes).
func Base64(data []byte) string { return prefixed("", data) }

// DataURL returns data as a base64 data: URL of the given MIME type.
func DataURL(mimeType string, data []byte) string {
	return prefixed("data:"+mimeType+";base64,", data)
}

func prefixed(prefix string, data []byte) string {
	var b strings.Builder
	b.Grow(len(prefix) + base64.StdEncoding.EncodedLen(len(data)))
	b.WriteString(prefix)
	w := base64.NewEncoder(base64.StdEncoding, &b)
	_, _ = w.Write(data) // a strings.Builder does not fail
	_ = w.Close()
	return b.String()
}
