package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Extension discovery through the binary (CONTRACT §18):
// extension_notification findings right after started and before the
// model's output, across the user layer, a trusted workspace and explicit
// roots; nothing is started; at most 64 a run; hello does not scan.

func extensionManifest(name, api, command string) string {
	return fmt.Sprintf(`{"name":%q,"version":"2.0.0","description":"Test extension.","api_version":%q,"command":%s}`, name, api, command)
}

func TestExtensionsThroughTheBinary(t *testing.T) {
	home, root, outside := t.TempDir(), t.TempDir(), t.TempDir()
	marker := filepath.Join(t.TempDir(), "extension-ran")
	ext := func(layer, folder, content string) {
		writeLayerFile(t, filepath.Join(layer, "extensions", folder, "extension.json"), content)
	}
	user := filepath.Join(home, ".octet")
	ext(user, "fmt", extensionManifest("fmt", "0.3", `["fmt-ext"]`))
	ext(root, "fmt", extensionManifest("fmt", "0.3", `["fmt-ext"]`))
	// A command that would leave a marker if anything ran it.
	ext(root, "marker", extensionManifest("marker", "0.3", fmt.Sprintf(`["/bin/sh","-c","touch %s"]`, marker)))
	ext(root, "next-api", extensionManifest("next-api", "1.0", `["x"]`))
	ext(root, "renamed", extensionManifest("other", "0.3", `["x"]`))
	writeLayerFile(t, filepath.Join(outside, "extension.json"), extensionManifest("linked", "0.3", `["x"]`))
	if err := os.Symlink(outside, filepath.Join(root, "extensions", "linked")); err != nil {
		t.Fatal(err)
	}

	for _, trust := range []bool{false, true} {
		args := []string{"--resource-root", root}
		if trust {
			args = append(args, "--trust-workspace")
		}
		p, fake, ws := resourceHost(t, []string{"HOME=" + home}, nil, args...)
		ext(filepath.Join(ws, ".octet"), "ws-ext", extensionManifest("ws-ext", "0.3", `["x"]`))
		p.send(t, resourceRunLine("r1", ws, fake, ""))
		evs := readEvents(t, p)
		var types, got []string
		for _, ev := range evs {
			types = append(types, ev.Type)
		}
		for _, n := range dataOf(t, evs, "extension_notification") {
			got = append(got, fmt.Sprintf("%s@%s:%s:%s", n["extension"], n["layer"], n["level"], n["code"]))
			msg, _ := n["message"].(string)
			for _, host := range []string{home, root, outside, ws, marker} {
				if strings.Contains(msg, host) {
					t.Errorf("message names %s: %q", host, msg)
				}
			}
		}
		want := []string{"fmt@root:1:info:not_started", "fmt@user:info:shadowed", "linked@root:1:error:manifest_invalid",
			"marker@root:1:info:not_started", "next-api@root:1:warning:api_version_unsupported", "renamed@root:1:error:manifest_invalid"}
		if trust {
			want = append(want, "ws-ext@workspace:info:not_started")
		}
		if !slices.Equal(got, want) {
			t.Errorf("trust=%v: notifications\n%v\nwant\n%v", trust, got, want)
		}
		// accepted, started, the notifications, then the model's answer.
		n := len(want)
		if len(types) < n+3 || types[0] != "accepted" || types[1] != "started" || types[n+1] != "extension_notification" ||
			types[n+2] != "model_delta" {
			t.Errorf("trust=%v: event order %v", trust, types)
		}
		// Broken manifests are logged too.
		if logs := p.stderr.String(); !strings.Contains(logs, "manifest_invalid") || strings.Contains(logs, outside) {
			t.Errorf("stderr:\n%s", logs)
		}
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("an extension's command ran: %v", err)
	}
}

func TestExtensionNotificationsCappedThroughTheBinary(t *testing.T) {
	root := t.TempDir()
	for i := range 100 {
		n := fmt.Sprintf("ext-%03d", i)
		writeLayerFile(t, filepath.Join(root, "extensions", n, "extension.json"), extensionManifest(n, "0.3", `["x"]`))
	}
	p, fake, ws := resourceHost(t, nil, nil, "--resource-root", root)
	p.send(t, resourceRunLine("r1", ws, fake, ""))
	ns := dataOf(t, readEvents(t, p), "extension_notification")
	if len(ns) != 65 || ns[63]["extension"] != "ext-063" || ns[64]["code"] != "truncated" ||
		!strings.Contains(ns[64]["message"].(string), "36 more extension names") {
		t.Fatalf("%d notifications, last %v", len(ns), ns[len(ns)-1])
	}
}

func TestHelloExtensionsWithoutScanning(t *testing.T) {
	// A root whose extensions folder is unreadable garbage: hello never looks.
	root := t.TempDir()
	writeLayerFile(t, filepath.Join(root, "extensions", "x", "extension.json"), "{")
	p := startEnv(t, nil, hostBin, "--resource-root", root)
	p.send(t, `{"protocol_version":1,"request_id":"h","command":"hello"}`)
	ev := p.next(t)
	if ev.Type != "hello" || !strings.Contains(string(ev.Data), `"extensions":true`) {
		t.Fatalf("%s %s", ev.Type, ev.Data)
	}
	if strings.Contains(p.stderr.String(), "manifest_invalid") {
		t.Error("hello scanned the extensions")
	}
}
