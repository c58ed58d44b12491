// Command octet-host is the headless coding-agent host: applications launch
// it as a subprocess and drive it with native-host protocol 1 (UTF-8 NDJSON)
// on stdin/stdout. Logs go to stderr; stdout carries protocol frames only.
package main
