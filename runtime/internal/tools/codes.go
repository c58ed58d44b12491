package tools

import "octet.dev/host/protocol"

// Error codes of tool failures: the protocol's (package protocol), named
// here for this package's code. They reach the model and the caller in
// tool_finish.error.code (CONTRACT §9); a new one is added to
// protocol.ToolCodes and docs/protocol.md. Gate reports path_outside_workspace,
// symlink_refused and protected_path before a call runs, and the caller
// denies the call with the denial code of the same value; Run reports them
// too when the workspace changed after the gate.
const (
	// CodeInvalidArguments: the arguments are not a JSON object, a member is
	// unknown, duplicated, of the wrong type, out of range or missing, or a
	// pattern does not compile.
	CodeInvalidArguments = protocol.CodeInvalidArguments
	// CodeUnknownTool: Run was called with a name Specs does not list.
	CodeUnknownTool = protocol.CodeUnknownTool
	// CodePathOutsideWorkspace: the path leaves the workspace ("..", or an
	// absolute path outside it).
	CodePathOutsideWorkspace = protocol.CodePathOutsideWorkspace
	// CodeSymlinkRefused: the path goes through a symbolic link; links are
	// never followed.
	CodeSymlinkRefused = protocol.CodeSymlinkRefused
	// CodeNotFound: the path does not exist; for edit, also old_text does
	// not occur in the file.
	CodeNotFound = protocol.CodeNotFound
	// CodeIsDirectory: a file was needed but the path is a directory.
	CodeIsDirectory = protocol.CodeIsDirectory
	// CodeNotDirectory: a directory was needed but the path (or a parent)
	// is not one.
	CodeNotDirectory = protocol.CodeNotDirectory
	// CodeNotRegularFile: the path is a device, FIFO or socket.
	CodeNotRegularFile = protocol.CodeNotRegularFile
	// CodeBinaryFile: the file holds a NUL byte or invalid UTF-8 in its
	// first 8 KiB.
	CodeBinaryFile = protocol.CodeBinaryFile
	// CodeNotUnique: edit's old_text occurs more than once.
	CodeNotUnique = protocol.CodeNotUnique
	// CodeNoChange: edit's old_text equals new_text.
	CodeNoChange = protocol.CodeNoChange
	// CodeFileTooLarge: edit's file is larger than editMaxFileBytes (edit
	// holds the file and its new content in memory).
	CodeFileTooLarge = protocol.CodeFileTooLarge
	// CodeIOError: the file system failed in another way.
	CodeIOError = protocol.CodeIOError
	// CodeCanceled: the context was canceled before the tool finished.
	CodeCanceled = protocol.CodeCanceled
	// CodeProtectedPath: edit or write aimed at an operator configuration
	// directory: the workspace's .octet (checkMutable), or any directory
	// of Env.Guard (the user's ~/.octet wherever it lies) found by file
	// identity.
	CodeProtectedPath = protocol.CodeProtectedPath
)
