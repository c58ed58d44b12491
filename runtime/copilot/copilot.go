package copilot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	internal "octet.dev/host/runtime/internal/copilot"
)

// Provider names accepted by --login and --logout.
var Names = []string{"copilot", "github-copilot"}

// IsName reports whether name selects GitHub Copilot.
func IsName(name string) bool { return name == "copilot" || name == "github-copilot" }

// LoginOptions configure Login.
type LoginOptions struct {
	// Headless never opens a browser: the URI and code are only printed.
	Headless bool
	// Out receives the instructions and the outcome (the CLI passes
	// stderr, so stdout stays clean). Nil: io.Discard.
	Out io.Writer
	// Home is the directory holding .octet; empty: os.UserHomeDir().
	Home string
	// HTTPClient sends the requests (nil: http.DefaultClient); redirects
	// are never followed.
	HTTPClient *http.Client
	// Now and Sleep are the clock (nil: the real one).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// OpenBrowser opens the verification URI when not Headless (nil: no
	// browser is opened). Its failure is reported and the login goes on.
	OpenBrowser func(uri string) error
}

// Errors a caller may tell apart (errors.Is).
var (
	// ErrNoClientID: no OAuth client id is configured; the message says
	// what to put in ~/.octet/settings.json.
	ErrNoClientID = internal.ErrNoClientID
)

// DeviceError is a terminal answer of the device flow (its Code is
// GitHub's: expired_token, access_denied, …, or "expired" locally).
type DeviceError struct {
	Code string
	msg  string
}

func (e *DeviceError) Error() string { return e.msg }

// publicError returns a terminal device-flow answer as a *DeviceError,
// anything else as it is.
func publicError(err error) error {
	var de *internal.DeviceError
	if errors.As(err, &de) {
		return &DeviceError{Code: de.Code, msg: de.Error()}
	}
	return err
}

func home(h string) (string, error) {
	if h != "" {
		if !filepath.IsAbs(h) {
			return "", errors.New("copilot: the home directory must be absolute")
		}
		return h, nil
	}
	d, err := os.UserHomeDir()
	if err != nil {
		return "", errors.New("copilot: no home directory")
	}
	return d, nil
}

// Login runs the device flow and stores the new login, replacing any
// previous one (a session cached for the old login is then refused). It
// returns ctx's error when interrupted (the CLI exits 130 on Ctrl-C), a
// *DeviceError for a terminal device-flow answer, ErrNoClientID without a
// configured client id; nothing is stored on any failure.
func Login(ctx context.Context, o LoginOptions) error {
	h, err := home(o.Home)
	if err != nil {
		return err
	}
	out := o.Out
	if out == nil {
		out = io.Discard
	}
	host := &internal.FileHost{Home: h, HTTPClient: o.HTTPClient, Now: o.Now, Sleep: o.Sleep}
	return publicError(login(ctx, host, out, o))
}

func login(ctx context.Context, host internal.Login, out io.Writer, o LoginOptions) error {
	dl, err := host.BeginDeviceLogin(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "To log in to GitHub Copilot, open %s and enter the code %s\n", dl.VerificationURI, dl.UserCode)
	fmt.Fprintf(out, "Waiting for the authorization (the code expires in %s)...\n", dl.ExpiresAt.Sub(nowOf(o)).Round(time.Second))
	if !o.Headless && o.OpenBrowser != nil {
		if err := o.OpenBrowser(dl.VerificationURI); err != nil {
			fmt.Fprintf(out, "The browser could not be opened; open the address above yourself.\n")
		}
	}
	cred, err := host.PollDeviceLogin(ctx, dl)
	if err != nil {
		return err
	}
	if err := host.SaveCredential(ctx, cred); err != nil {
		return err
	}
	fmt.Fprintln(out, "Logged in to GitHub Copilot; the login is stored in ~/.octet/credentials/copilot.json.")
	return nil
}

func nowOf(o LoginOptions) time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

// LogoutNotice is what Logout prints after deleting the login.
const LogoutNotice = "Logged out of GitHub Copilot locally: ~/.octet/credentials/copilot.json was deleted. The authorization was not revoked on GitHub; revoke it under Settings > Applications > Authorized OAuth Apps if you want to."

// Logout deletes ~/.octet/credentials/copilot.json atomically under its
// lock and prints LogoutNotice (or that no login was stored) to out (nil:
// nothing printed). It is a local logout: the GitHub authorization is not
// revoked, and the message says so.
func Logout(home_ string, out io.Writer) error {
	h, err := home(home_)
	if err != nil {
		return err
	}
	if out == nil {
		out = io.Discard
	}
	ok, err := (&internal.FileHost{Home: h}).Remove(context.Background())
	if err != nil {
		return err
	}
	if !ok {
		fmt.Fprintln(out, "No GitHub Copilot login is stored; nothing was deleted.")
		return nil
	}
	fmt.Fprintln(out, LogoutNotice)
	return nil
}

// NewFileHost returns the coding adapter's login store on home, for an
// embedder that wants runtime.Options.Copilot on the same store
// (NewGitHubProvider).
func NewFileHost(home string, client *http.Client) FileHost {
	return FileHost{Home: home, HTTPClient: client}
}
