// Package generate builds the JSON Schema (draft 2020-12) of native-host
// protocol 1 from the vocabulary package protocol. The reflection is
// github.com/invopop/jsonschema's; this package patches what the reflector
// cannot know: the request envelopes and their strictness (no unknown
// member, no null), the event envelope with data tied to type, nullable
// members, the ID rules, and the enumerations and code lists.
//
// It runs from go generate (spec/schema/gen) and from the staleness test
// of spec/schema; both pass the directory of package protocol so that the
// Go doc comments become descriptions.
package generate
