// Package schematest validates protocol frames against the JSON Schema of
// spec/schema, for tests: the transcript tests, the end-to-end tests of
// octet-host and the Go client's tests call it on every line they read and
// on the request lines the host accepted.
//
// Events are validated strictly: every object the schema describes with
// properties must have no other member, so a test fails when the host
// writes a member the schema does not document (the published schema
// leaves events open for clients, since members may be added later).
// The schemas are compiled once per test binary. The RPC functions do the
// same for the octet CLI's RPC mode (spec/schema.RPCJSON).
package schematest
