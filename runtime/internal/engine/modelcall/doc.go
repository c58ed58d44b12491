// Package modelcall holds what one model call returns to the engine and
// its parts: the committed Turn (text, reasoning, tool calls, usage, the
// output media an attempt spooled) and Failed, the error of a call that
// recovery gave up on, with the code the run ends with. It is the one
// vocabulary the engine's packages (compaction, the terminal gate,
// steering, reasoning) share about a model call, so none of them needs the
// engine's driver to call the model.
package modelcall
