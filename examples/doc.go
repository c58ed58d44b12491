// Package examples holds client examples in other languages (node/,
// python/) and the test that runs each against a freshly built octet-host
// and the fake provider, when its runtime is installed.
package examples
