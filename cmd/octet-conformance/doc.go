// Command octet-conformance checks that a program speaks native-host
// protocol 1 the way this project's contract states it. It launches the
// program under test as a subprocess, in its own process group (killed
// whole on a timeout and at the end of each case), and drives it through:
//
//   - transcript cases: txtar files (cases/*.txtar, embedded; -cases DIR
//     reads another folder) for hello, models, shutdown, EOF, malformed,
//     oversized and duplicate requests, refused runs, and runs against a
//     fake model provider it starts on loopback (a text answer, a tool
//     call, a provider retry, a provider error, a session echo);
//   - a framing fuzzer, generated in Go: malformed and edge lines (invalid
//     UTF-8, lines over 1 MiB, non-objects, duplicate and unknown members,
//     bad ids, wrong types) and seeded mutants, each of which must get its
//     answer while the host keeps serving, checked by a hello probe after
//     each line.
//
// Every event is checked against the event envelope and, as it arrives,
// against the session invariants of package octet.dev/host/spec (seq
// from 1 without gaps per request, exactly one terminal event, serial
// requests, nothing after shutdown); runs against spec's run lifecycle and
// recovery invariants. What a host may choose — message texts, the
// sdk_version, feature flags other than the two the protocol fixes, the
// catalog, the number of model_delta events — is never compared.
//
// Some cases establish prerequisites the others require (the handshake,
// the framing of a malformed line's answer, a run's numbered events up to
// its final_result). They run first; when one fails, the cases requiring
// what it provides are skipped with that reason, so one cause is reported
// once instead of every case waiting out its timeout.
//
// Usage:
//
//	octet-conformance [flags] HOST [HOST-ARGS...]
//	octet-conformance [flags] -host HOST [HOST-ARGS...]
//
// It prints one line per case (ok, FAIL with the reason, or skip with
// the reason) and a summary line "N passed, N failed", followed by
// ", N skipped" when a case was skipped. -json prints one JSON object per
// case instead (the summary then goes to stderr), -junit FILE also writes
// a JUnit XML report. It exits 0 when every case that ran passed, 1 when
// one failed or none ran, 2 on bad usage.
//
// -level protocol checks only what the protocol source fixes: it skips
// the cases of this project's own decisions (an empty line is an error,
// duplicate request ids, a tolerated trailing carriage return), lets a
// malformed line's protocol_error carry request_id null, and accepts any
// snake_case error code. The default, -level contract, also requires this
// project's error codes (docs/protocol.md: "Protocol error codes" and "Run
// error codes").
//
// docs/conformance.md of the repository is the guide for host authors:
// the levels, the reports, the case file format.
package main
