package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"octet.dev/host/protocol"
)

// Extension discovery through real runs (CONTRACT §18): the
// findings come right after started, before the model's output; nothing
// is started; the workspace layer needs trust.

func writeExtension(t *testing.T, layer, folder, manifest string) {
	t.Helper()
	writeRes(t, filepath.Join(layer, "extensions", folder, "extension.json"), manifest)
}

func extManifest(name, api string, command ...string) string {
	if len(command) == 0 {
		command = []string{"node", "index.js"}
	}
	q := make([]string, len(command))
	for i, c := range command {
		q[i] = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf(`{"name":%q,"version":"1.0.0","description":"An extension.","api_version":%q,"command":[%s]}`, name, api, strings.Join(q, ","))
}

func TestRunExtensionNotifications(t *testing.T) {
	f := newFixture(t, text("Hel", "lo"), text("again"))
	root := t.TempDir()
	marker := filepath.Join(t.TempDir(), "extension-ran")
	user := filepath.Join(f.home, ".octet")
	writeExtension(t, user, "lint", extManifest("lint", "0.3"))
	writeExtension(t, root, "lint", extManifest("lint", "0.3"))
	writeExtension(t, root, "marker", extManifest("marker", "0.3", "/bin/sh", "-c", "touch "+marker))
	writeExtension(t, root, "future", extManifest("future", "0.4"))
	writeExtension(t, root, "broken", `{"name":"broken"}`)
	writeExtension(t, filepath.Join(f.ws, ".octet"), "local", extManifest("local", "0.3"))
	resourceAgent(t, f, []string{root}, nil, nil)

	evs, res := f.run(f.req("hi"))
	if res.Status != "completed" {
		t.Fatalf("result %+v", res)
	}
	// accepted, started, the findings, then the model's output.
	want := []protocol.EventType{"accepted", "started", "extension_notification", "extension_notification", "extension_notification",
		"extension_notification", "extension_notification", "model_delta", "model_delta", "model_step", "settled", "final_result"}
	if diff := cmp.Diff(want, types(evs)); diff != "" {
		t.Fatalf("event types (-want +got):\n%s", diff)
	}
	var got []string
	for _, n := range find[protocol.ExtensionNotification](evs) {
		got = append(got, n.Extension+"@"+n.Layer+":"+n.Level+":"+string(n.Code))
		for _, p := range []string{root, f.home, f.ws, marker} {
			if strings.Contains(n.Message, p) {
				t.Errorf("message names a host path: %q", n.Message)
			}
		}
	}
	// The untrusted workspace's extension is not discovered.
	wantN := []string{"broken@root:1:error:manifest_invalid", "future@root:1:warning:api_version_unsupported",
		"lint@root:1:info:not_started", "lint@user:info:shadowed", "marker@root:1:info:not_started"}
	if diff := cmp.Diff(wantN, got); diff != "" {
		t.Errorf("notifications (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(marker); !os.IsNotExist(err) {
		t.Errorf("an extension's command ran: %v", err)
	}
	// Nothing about extensions reaches the model.
	if sys := f.prov.requests()[0].System; strings.Contains(sys, "An extension.") || strings.Contains(sys, "index.js") {
		t.Errorf("the system prompt mentions extensions:\n%s", sys)
	}

	// Trusted, the workspace's .octet is a layer: its extension is found.
	writeRes(t, filepath.Join(f.home, ".octet/settings.json"), `{"trusted_workspaces":["`+f.ws+`"]}`)
	req := f.req("hi")
	req.RunID = "run-2"
	evs, _ = f.run(req)
	names := []string{}
	for _, n := range find[protocol.ExtensionNotification](evs) {
		names = append(names, n.Extension+"@"+n.Layer)
	}
	if !slices.Contains(names, "local@workspace") || len(names) != 6 {
		t.Errorf("trusted: %v", names)
	}
}

func TestRunWithoutExtensionsSendsNone(t *testing.T) {
	f := newFixture(t, text("ok"))
	evs, _ := f.run(f.req("hi"))
	if n := find[protocol.ExtensionNotification](evs); len(n) != 0 {
		t.Errorf("notifications %v", n)
	}
}

func TestRunExtensionNotificationsCapped(t *testing.T) {
	f := newFixture(t, text("ok"))
	root := t.TempDir()
	for i := range 80 {
		n := fmt.Sprintf("ext-%02d", i)
		writeExtension(t, root, n, extManifest(n, "0.3"))
	}
	resourceAgent(t, f, []string{root}, nil, nil)
	evs, _ := f.run(f.req("hi"))
	ns := find[protocol.ExtensionNotification](evs)
	if len(ns) != 65 || ns[63].Extension != "ext-63" || ns[64].Code != protocol.CodeTruncated ||
		!strings.Contains(ns[64].Message, "16 more extension names") {
		t.Fatalf("%d notifications, last %+v", len(ns), ns[len(ns)-1])
	}
	// All of them between started and the first model output.
	ty := types(evs)
	if ty[1] != "started" || ty[66] != "extension_notification" || ty[67] != "model_delta" {
		t.Errorf("order %v", ty)
	}
}
