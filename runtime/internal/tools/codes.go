package tools

// Error codes of tool failures. They are stable snake_case strings that
// reach the model and the caller in tool_finish.error.code (CONTRACT §9);
// document any new one in the README. Gate reports path_outside_workspace,
// symlink_refused and protected_path before a call runs, and the caller
// denies the call with the denial code of the same value; Run reports them
// too when the workspace changed after the gate.
const (
	// CodeInvalidArguments: the arguments are not a JSON object, a member is
	// unknown, duplicated, of the wrong type, out of range or missing, or a
	// pattern does not compile.
	CodeInvalidArguments = "invalid_arguments"
	// CodeUnknownTool: Run was called with a name Specs does not list.
	CodeUnknownTool = "unknown_tool"
	// CodePathOutsideWorkspace: the path leaves the workspace ("..", or an
	// absolute path outside it).
	CodePathOutsideWorkspace = "path_outside_workspace"
	// CodeSymlinkRefused: the path goes through a symbolic link; links are
	// never followed.
	CodeSymlinkRefused = "symlink_refused"
	// CodeNotFound: the path does not exist; for edit, also old_text does
	// not occur in the file.
	CodeNotFound = "not_found"
	// CodeIsDirectory: a file was needed but the path is a directory.
	CodeIsDirectory = "is_directory"
	// CodeNotDirectory: a directory was needed but the path (or a parent)
	// is not one.
	CodeNotDirectory = "not_directory"
	// CodeNotRegularFile: the path is a device, FIFO or socket.
	CodeNotRegularFile = "not_regular_file"
	// CodeBinaryFile: the file holds a NUL byte or invalid UTF-8 in its
	// first 8 KiB.
	CodeBinaryFile = "binary_file"
	// CodeNotUnique: edit's old_text occurs more than once.
	CodeNotUnique = "not_unique"
	// CodeNoChange: edit's old_text equals new_text.
	CodeNoChange = "no_change"
	// CodeFileTooLarge: edit's file is larger than editMaxFileBytes (edit
	// holds the file and its new content in memory).
	CodeFileTooLarge = "file_too_large"
	// CodeIOError: the file system failed in another way.
	CodeIOError = "io_error"
	// CodeCanceled: the context was canceled before the tool finished.
	CodeCanceled = "canceled"
	// CodeProtectedPath: edit or write aimed at the workspace's .octet
	// directory, the operator's configuration (see checkMutable).
	CodeProtectedPath = "protected_path"
)
