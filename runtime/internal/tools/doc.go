// Package tools implements the workspace tools the agent loop offers the
// model: read, ls, grep, find (effect workspace_read) and edit, write
// (effect workspace_mutation) (CONTRACT §10). bash lives elsewhere.
//
// It owns each tool's parameters (one table per tool drives both the JSON
// Schema in Specs and the strict argument decoder), its output format and
// bound, and the mapping of failures to stable error codes (codes.go). It
// does not decide whether a call's effect may run: the policy does that.
// Gate runs the workspace gates on a call's arguments (confinement, link
// refusal, protected paths) so that the caller can deny the call before it
// announces it as allowed; Run does not rely on it. Every file access goes through a confine.Root, so no path, "..", absolute
// path or symbolic link can reach outside the workspace; tools never follow
// links.
//
// Usage:
//
//	specs := tools.Specs() // offered to the model
//	if err := tools.Gate(env, call.Name, args); err != nil { ... } // denied before the announcement
//	res, err := tools.Run(ctx, tools.Env{Root: root}, call.Name, []byte(call.Arguments))
//	var te *tools.Error
//	if errors.As(err, &te) { ... te.Code ... } // goes back to the model as a tool error
//
// Arguments are decoded strictly: a non-object, an unknown, duplicated or
// case-variant member, a wrong JSON type (null included), a value out of
// range or a missing required member is an invalid_arguments error naming
// the member. Output is valid UTF-8 bounded by Env.MaxOutputBytes; a cut
// ends with the line "[output truncated: N of M bytes shown]" and sets
// Result.Truncated. Limits (lines, entries, matches) are not truncation:
// they end the output with a note saying how to see more.
//
// grep and find skip .git, and files and directories ignored by .gitignore
// files (the common subset of gitignore(5); see ignorer). grep walks on the
// calling goroutine and searches files on at most grepMaxWorkers workers
// through the root descriptor, each streaming a file through a fixed buffer
// of grepBufBytes (a longer line is searched in its first grepBufBytes
// only), so its memory grows neither with file size nor with GOMAXPROCS. It
// stops reading once the first limit matches in path order are known, or
// once they fill the output bound, so its output is deterministic.
//
// Concurrency: Run may be called from many goroutines at once, with the
// same or different Envs. A call's goroutines (grep's workers) have all
// returned when Run returns. Two concurrent mutations of the same file each
// replace it atomically; the last rename wins.
package tools
