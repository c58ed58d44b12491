// Package store owns the native session files of CONTRACT §13: one
// append-only JSONL file per session ID in a session directory, with the
// lock that keeps two hosts from writing one session.
//
// # Files
//
// A session ID (CONTRACT §4) maps to a file name with FileName; the mapping
// is injective and never leaves the directory ("." maps to "~2e.jsonl").
// Beside the session file live <name>.lock, which carries the flock and is
// never removed, and, only while a session is being created, <name>.tmp.
// Line 1 is a Header; every later line is one Record:
//
//	{"type":"session","schema_version":1,"id":"s1","created_at":"2026-01-02T03:04:05Z"}
//	{"type":"run_start","ts":"2026-01-02T03:04:05.1Z","run_id":"run-1"}
//	{"type":"message","ts":"2026-01-02T03:04:05.2Z","run_id":"run-1","message":{"role":"user","text":"hi"}}
//	{"type":"usage_uncertainty","ts":"2026-01-02T03:04:06Z","record":{"endpoint":"codex","model":"openai/gpt-5.4","operation":"assistant_turn"}}
//
// Records of a type this build does not know load as Unknown, are counted
// (Session.UnknownRecords) and are ignored by the conversation and the
// helpers, so files written by newer builds still open. Unknown members of
// known records are ignored for the same reason.
//
// # Format and versions
//
// The store owns the file format: every member of every line is defined by
// a type of this package (record.go, native.go, and format.go for the
// content of messages and usage), never by a type of another package. The
// conversation message a message record holds is a MessageV1 (with
// ReasoningBlockV1, MediaV1, ToolCallV1), token counts are a UsageV1; the
// agent loop speaks provider.Message and provider.Usage, and convert.go
// maps between the two explicitly, field by field (NewMessageV1,
// MessageV1.Provider, NewUsageV1, UsageV1.Provider). Changing a JSON tag of
// a provider type therefore changes neither the lines written nor the
// lines read; a provider field the format does not map fails
// TestConvertCoversProvider until it is mapped or listed as never stored.
//
// The V1 suffix names the header's schema_version (SchemaVersion). Within
// a version the format may only grow: a new record type (older builds load
// it as Unknown) or a new member that older builds may ignore and that
// this build reads as absent from older files. A member is never renamed,
// removed, reordered or given another type or omission rule, since the
// bytes of every line written so far are the format: the member names,
// their order (the field order of the types) and which members a line
// leaves out (omitempty drops "", [] and {}, never false or 0; omitzero
// drops a nil raw value). Any other change is a new schema version: new
// types (MessageV2, …), SchemaVersion raised, and the V1 types kept to read
// the files already written. testdata/golden.jsonl (every record type,
// re-encoded byte-identically) and testdata/compat (sessions written by an
// earlier build, read back and appended to exactly as it did) fail on any
// change to the bytes.
//
// # Entries, checkout and fork
//
// A record is identified by its 1-based sequence number in the file (the
// header not counted); since the file only grows, the number is stable. The
// message and compaction records are the entries (Session.Entries). Each
// record continues the head it was appended at; a Checkout record moves the
// head back to an earlier entry (or 0, the start) without being on any
// branch itself, so Session.Messages is the conversation of the records on
// the path from the start to the head. Without a checkout that path is the
// whole file, and nothing is computed for it. Session.Fork writes a new
// session that starts with a Fork record and a copy of the conversation at
// the head, without the ledger.
//
// # Durability
//
// Append encodes its records as whole lines, writes them with one write call
// and returns only after fdatasync: a record is durable exactly when Append
// (or RecordUsageUncertainty) has returned nil. A new file is created with
// its header through a synced temporary file, a rename and a directory sync,
// so no crash leaves a session file without a valid header.
//
// Sessions expect torn tails (DESIGN §2). On load, a last line without '\n',
// or a last line that does not decode, is a torn tail: it is ignored,
// reported by Session.TornTail and Session.TornBytes, and truncated away
// (then synced) before the next append, so a new record never merges with
// it. Any invalid line before the last one is corruption: Open fails with a
// *CorruptError (errors.Is ErrCorrupt) naming the 1-based line; such a line
// is never skipped. A header of another schema version fails with
// ErrUnsupportedSchema.
//
// # File system
//
// The session files (the lock, the temporary file, the session file) go
// through a small file-system seam, fs.go: open with flags, write,
// positioned read, truncate, stat, fdatasync, flock, mkdir, rename,
// remove and directory sync, nothing more. Outside the tests it is osFS,
// the system calls as they were (the resume and append benchmarks did
// not move); media objects use the system calls directly. The tests also
// run the store on crashFS (crashfs_test.go), an in-memory file system
// that remembers, per file, the bytes its last fdatasync covered and, per
// directory, the entries its last sync covered; Crash returns what a power
// loss leaves: only that, optionally with a random prefix of a file's
// unsynced tail (a torn write) and unsynced directory entries.
// TestCrashPoints lets runs append every record kind (checkpoints,
// checkouts, forks included), crashes at a random file operation and
// checks on reopening that Open succeeds, every record whose Append
// returned is there, nothing that was never appended is, and a torn tail
// goes with the next append. TestCrash kills a child process with SIGKILL,
// which keeps the page cache. Both are seeded: the seed is logged (-v) and
// printed on failure, -crash.seed or OCTET_CRASH_SEED replays it, and
// -crash.count sets how many; scripts/crash-long runs thousands.
//
// # Memory
//
// A Session does not hold its records decoded. Open reads the file once,
// forward, through a bounded buffer (1 MiB, more only for a longer line),
// checks every line exactly as a full decode would (the fast path and the
// skimming decoder only spare the copying of text, never a check) and
// keeps:
//
//   - an index: per record, the offset of its line, its type, the
//     ordinal of the message records before it, and a few numbers the
//     branches and the conversation need (a checkout's entry, a
//     checkpoint's first_kept and native route, the run ID of a message
//     or run start, interned, and whether a message is a run's prompt);
//   - what is derived from the whole file: the usage records (the ledger,
//     UsageRecords), the usage_uncertainty records, how each run ended,
//     the native steering intents, the reasoning selection, the fork
//     record, the counts.
//
// The conversation (Messages, MessagesFor, Conversation) is built from the
// index; the bodies it uses (the newest applicable checkpoint on the
// head's branch and the message records it keeps) are read back from the
// file with positioned reads on the first call and then held, with the
// message and compaction records appended since, until a later
// conversation no longer uses them. ConversationOrdinals, ContextUsage,
// HasConversation, Head and the derived state read nothing;
// LatestCompaction reads the checkpoint unless the conversation holds it.
// Records, Entries and Fork read back what they return, Records and
// Entries every record of their kind at once. Since the file only grows
// and the lock keeps every other writer away, an offset stays valid for
// as long as the Session is open; a record that no longer reads back as it
// loaded (the file was changed behind the lock) or an I/O error fails the
// Session (ErrFailed), and after Close nothing is read back (Records and
// Entries return nil, Conversation an error unless the conversation it
// asks for is the one already held).
//
// A 100,000-record session (70 MiB) with a checkpoint every 500 records
// resumes (Open, then Messages) in 0.1 to 0.2 s on two shared cores with
// a peak RSS under 32 MiB (BenchmarkResume100kCheckpoints), where holding
// every record decoded took 0.27 to 0.5 s and over 220 MiB.
//
// # Concurrency
//
// Open takes an exclusive, non-blocking flock on <name>.lock; a second Open
// of the same session, from this process or another, gets ErrLocked until
// Close. A Session is safe for use by one goroutine at a time; callers that
// share one must serialize their calls, the queries included (building a
// conversation updates what the Session holds). Open decodes the chunks of
// a large file on up to GOMAXPROCS goroutines, which all finish before it
// returns; nothing else in the package starts a goroutine.
package store
