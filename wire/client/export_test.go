package client

// HostBinaryForExamples returns the octet-host binary TestMain built, for the
// examples of package client_test; it panics when the build failed.
func HostBinaryForExamples() string {
	if hostBuildErr != nil {
		panic(hostBuildErr)
	}
	return hostBin
}
