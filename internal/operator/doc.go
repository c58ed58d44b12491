// Package operator holds what the two binaries, octet-host and octet,
// share of their operator configuration: the tool-policy flags (the CLI
// layer), the environment layer, --trust-workspace, the provider idle
// timeout and the explicit resource roots (OCTET_RESOURCE_ROOTS, then
// --resource-root), and the process set-up both do before serving (a non-dumpable
// process, a reserved stdout).
package operator
