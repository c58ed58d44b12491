// Command gen writes the JSON Schema of native-host protocol 1
// (protocol-1.schema.json) from the vocabulary package protocol. It runs
// from go generate in spec/schema: go generate ./spec/schema.
package main

import (
	"flag"
	"fmt"
	"os"

	"octet.dev/host/spec/schema/internal/generate"
)

func main() {
	out := flag.String("o", "protocol-1.schema.json", "the file to write")
	dir := flag.String("protocol", "../../protocol", "the directory of package protocol, for the doc comments")
	flag.Parse()
	data, err := generate.Generate(*dir)
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
