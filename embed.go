package octethost

import "embed"

// Docs is the documentation the binary carries (issue 12): the README
// (which holds the event and error-code tables), the contract and the
// protocol's JSON Schema. The runtime materializes it as files for the
// model's octet-docs skill, and `octet-host --docs` prints where
// (runtime.Options.Docs).
//
// go:embed cannot reach a parent directory, so the directive lives here, in
// the package at the root of the module, and names the files relative to
// it; cmd/octet-host passes Docs to the runtime. To carry another file,
// add its path or pattern to the directive: the runtime materializes
// whatever the directive embeds, under the same relative paths.
//
//go:embed README.md spec/CONTRACT.md spec/schema/protocol-1.schema.json
var Docs embed.FS
