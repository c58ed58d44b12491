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
	rpc := flag.Bool("rpc", false, "write the schema of the octet CLI's RPC mode instead")
	flag.Parse()
	gen := generate.Generate
	if *rpc {
		gen = generate.GenerateRPC
	}
	data, err := gen(*dir)
	if err == nil {
		err = os.WriteFile(*out, data, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
