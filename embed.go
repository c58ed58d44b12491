package octethost

import "embed"

// Docs is the documentation the binary carries (issue 12): the README
// (which holds the event and error-code tables) and the contract. The
// runtime materializes it as files for the model's octet-docs skill, and
// `octet-host --docs` prints where (runtime.Options.Docs).
//
// go:embed cannot reach a parent directory, so the directive lives here, in
// the package at the root of the module, and names the files relative to
// it; cmd/octet-host passes Docs to the runtime. To carry another file,
// add its path or pattern to the directive (for example spec/schema/*.json
// once the schema is committed): the runtime materializes whatever the
// directive embeds, under the same relative paths.
//
//go:embed README.md spec/CONTRACT.md
var Docs embed.FS
