// Package schema is the JSON Schema (draft 2020-12) of native-host
// protocol 1: every request and every event, in one document with $defs,
// generated from the vocabulary package protocol and embedded here so
// that the binary can print it (octet-host --schema).
//
// The document's root accepts any frame; #/$defs/Request is one request
// line and #/$defs/Event one event line, with a definition per command
// (HelloRequest, ModelsRequest, RunRequest, ShutdownRequest) and per event
// type (the CamelCase of the type plus Event: ModelDeltaEvent). Requests
// are closed and never null, as the host decodes them; events are open,
// since clients must tolerate members added later.
//
// Regenerate after changing package protocol or protocol/rpc: go generate
// ./spec/schema.
// A test fails while the committed file is stale.
package schema

import (
	_ "embed"
	"slices"
)

//go:generate go run ./gen -o protocol-1.schema.json -protocol ../../protocol
//go:generate go run ./gen -rpc -o rpc.schema.json -protocol ../../protocol

// FileName is the schema's file in this directory.
const FileName = "protocol-1.schema.json"

//go:embed protocol-1.schema.json
var document []byte

// JSON returns the schema document (a copy: the caller may keep or change
// it).
func JSON() []byte { return slices.Clone(document) }

// RPCFileName is the RPC mode's schema file in this directory.
const RPCFileName = "rpc.schema.json"

//go:embed rpc.schema.json
var rpcDocument []byte

// RPCJSON returns the JSON Schema of the octet CLI's RPC mode (octet
// --mode rpc --schema prints it): #/$defs/Command is a command line,
// #/$defs/Line an output line (a response or a run event). A copy.
func RPCJSON() []byte { return slices.Clone(rpcDocument) }
