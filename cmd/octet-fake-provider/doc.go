// Command octet-fake-provider runs a loopback fake of the OpenAI Chat
// Completions, OpenAI Responses and Anthropic Messages APIs (package
// octet.dev/host/runtime/fakeprovider), for testing octet-host or an
// application outside Go tests.
//
// Usage:
//
//	octet-fake-provider [-addr 127.0.0.1:0] [-script script.json] [-fixture mode/name]
//
// The script file holds a fakeprovider.Script as JSON, for example
//
//	{"models": ["gpt-test"],
//	 "turns": [{"tool_calls": [{"name": "read", "arguments": {"path": "go.mod"}}]},
//	           {"text": "Done.", "usage": {"input": 40, "output": 2}}]}
//
// and "loading": N answers the first N model requests as llama-server does
// while it loads its model (HTTP 503 "Loading model").
//
// -fixture answers every request of one mode with a recorded fixture, e.g.
// "anthropic/llm-anthropic_text" (the mode may be a provider_mode name or a
// fixture folder name; -list prints the fixtures). With both flags, the
// fixture's mode replays the fixture and the other modes follow the script.
//
// Once listening it prints one JSON line on stdout with the base URLs to
// configure:
//
//	{"root":"http://127.0.0.1:40123","openai_compatible":"http://127.0.0.1:40123/v1",
//	 "openai_responses":"http://127.0.0.1:40123/v1","anthropic_messages":"http://127.0.0.1:40123"}
//
// It serves until SIGINT or SIGTERM, or until its standard input reaches
// end of file (so it dies with the process that started it with a pipe);
// -stdin=false turns the last off, for running it in the background with
// stdin closed. It exits 0 when stopped that way, 2 on bad flags, 1 on
// other errors. It listens on loopback addresses only.
package main
