// Package rpc is the vocabulary of the octet CLI's RPC mode (octet --mode
// rpc): the command lines an application writes to its stdin, the response
// lines, and the event lines, each a flat JSON object on one line. It is a
// leaf beside package protocol, whose run events it renames: an RPC event
// is the run event of protocol 1 with its data members lifted beside
// "type" and "runId" and every member name in camelCase (Camel), except
// the recovery events and output media, which take the payloads of this
// package.
//
// The JSON Schema of these lines is generated from this package (go
// generate ./spec/schema) and printed by octet --mode rpc --schema.
package rpc
