// Command gen writes the JSON Schema of native-host protocol 1
// (protocol-1.schema.json) from the vocabulary package protocol, or with
// -rpc the schema of the octet CLI's RPC mode (rpc.schema.json) from
// protocol and protocol/rpc. It runs
// from go generate in spec/schema: go generate ./spec/schema.
package main
