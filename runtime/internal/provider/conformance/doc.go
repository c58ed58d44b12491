// Package conformance checks the request bodies of the three wire modes
// against the providers' OpenAPI documents, through a Stoplight Prism
// validator on loopback (scripts/prism-check starts it). Without the
// validator's address in the environment the tests are skipped.
package conformance
