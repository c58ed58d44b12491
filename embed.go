package octethost

import "embed"

// Docs is the documentation both binaries carry: the README, the topic
// documents under docs/ (which hold the event and error-code tables), the
// contract and the protocol's JSON Schema. The runtime materializes it as
// files in one managed folder for the model's octet-docs skill, and
// `octet-host --docs` and `octet --docs` print where (runtime.Options.Docs).
//
// go:embed cannot reach a parent directory, so the directive lives here, in
// the package at the root of the module, and names the files relative to
// it; cmd/octet-host and cmd/octet pass Docs to the runtime. To carry another file,
// add its path or pattern to the directive: the runtime materializes
// whatever the directive embeds, under the same relative paths.
//
//go:embed README.md docs/*.md spec/CONTRACT.md spec/schema/protocol-1.schema.json
var Docs embed.FS
