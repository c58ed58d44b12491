// Command octet is the coding agent for a person at a terminal and for
// applications that want in-band control: it shares the runtime (tools,
// policy, sessions, providers, recovery) with octet-host.
//
// Print mode, `octet -p PROMPT`, runs one prompt and writes the answer, and
// only the answer, to stdout; progress and diagnostics go to stderr. RPC
// mode, `octet --mode rpc`, reads one JSON command a line on stdin and
// writes one JSON object a line (responses and run events) on stdout; see
// docs/cli.md.
package main
