package testbin

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Spec is one binary: a main package of the module and how to build it.
type Spec struct {
	// Pkg is the package's import path.
	Pkg string
	// Tags are the build tags (go build -tags), none when empty.
	Tags []string
	// Race builds with the race detector (go build -race).
	Race bool
}

// The module's commands as the tests build them.
var (
	Host         = Spec{Pkg: "octet.dev/host/cmd/octet-host"}
	Octet        = Spec{Pkg: "octet.dev/host/cmd/octet"}
	FakeProvider = Spec{Pkg: "octet.dev/host/cmd/octet-fake-provider"}
	Conformance  = Spec{Pkg: "octet.dev/host/cmd/octet-conformance"}
	Soak         = Spec{Pkg: "octet.dev/host/cmd/octet-soak"}
)

// args are the go build arguments of s, output path excepted.
func (s Spec) args() []string {
	var a []string
	if s.Race {
		a = append(a, "-race")
	}
	if len(s.Tags) > 0 {
		a = append(a, "-tags", strings.Join(s.Tags, ","))
	}
	return append(a, s.Pkg)
}

// name is the file name of the binary: the package's last element, as
// go build names it.
func (s Spec) name() string { return path.Base(s.Pkg) }

// Build returns the path of s's binary, building it unless a build with
// the same key is cached. The file must not be modified or removed by the
// caller.
func Build(s Spec) (string, error) {
	env, err := loadEnv()
	if err != nil {
		return "", err
	}
	if env.private {
		return buildPrivate(env, s)
	}
	return buildShared(env, s)
}

// MustBuild is Build for a TestMain: on failure it prints the error and
// exits with status 1.
func MustBuild(s Spec) string {
	p, err := Build(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testbin:", err)
		Cleanup()
		os.Exit(1)
	}
	return p
}

// Cleanup removes what this process built outside the shared cache (see
// the package documentation); a TestMain calls it before exiting.
func Cleanup() {
	privateMu.Lock()
	defer privateMu.Unlock()
	if privateDir != "" {
		os.RemoveAll(privateDir)
		privateDir = ""
	}
}

// buildEnv is what the key needs of the environment, computed once a
// process.
type buildEnv struct {
	goTool  string
	root    string // the module root
	base    []byte // the hash of every input but the Spec
	private bool   // the key cannot cover the inputs: no sharing
}

var (
	envOnce   sync.Once
	envCached *buildEnv
	envErr    error

	privateMu  sync.Mutex
	privateDir string
)

func loadEnv() (*buildEnv, error) {
	envOnce.Do(func() { envCached, envErr = computeEnv() })
	return envCached, envErr
}

// goEnvKeys are the go env settings a build's output depends on.
var goEnvKeys = []string{
	"GOVERSION", "GOROOT", "GOOS", "GOARCH", "GOEXPERIMENT", "GOFLAGS", "GOTOOLCHAIN", "GOFIPS140",
	"GOAMD64", "GOARM", "GOARM64", "GO386", "GOMIPS", "GOMIPS64", "GOPPC64", "GORISCV64", "GOWASM",
	"CGO_ENABLED", "CC", "CXX", "CGO_CFLAGS", "CGO_CPPFLAGS", "CGO_CXXFLAGS", "CGO_FFLAGS", "CGO_LDFLAGS",
	"GOMOD", "GOWORK",
}

func computeEnv() (*buildEnv, error) {
	goTool, err := findGo()
	if err != nil {
		return nil, err
	}
	out, err := exec.Command(goTool, append([]string{"env", "-json"}, goEnvKeys...)...).Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %v%s", err, stderrOf(err))
	}
	var vars map[string]string
	if err := json.Unmarshal(out, &vars); err != nil {
		return nil, fmt.Errorf("go env: %v", err)
	}
	if vars["GOMOD"] == "" || vars["GOMOD"] == os.DevNull {
		return nil, errors.New("go env GOMOD: not inside the module")
	}
	e := &buildEnv{goTool: goTool, root: filepath.Dir(vars["GOMOD"])}
	h := sha256.New()
	fmt.Fprintf(h, "testbin key v1\ngo %s\n", goTool)
	for _, k := range goEnvKeys {
		fmt.Fprintf(h, "%s=%q\n", k, vars[k])
	}
	if vars["GOWORK"] != "" && vars["GOWORK"] != "off" {
		e.private = true // other modules' files are inputs too
	}
	if local, err := localReplace(filepath.Join(e.root, "go.mod")); err != nil {
		return nil, err
	} else if local {
		e.private = true
	}
	if !strings.Contains(vars["GOFLAGS"], "-buildvcs=false") {
		// The go command stamps the revision and whether the tree is
		// modified into the binary.
		for _, args := range [][]string{{"rev-parse", "HEAD"}, {"status", "--porcelain"}} {
			cmd := exec.Command("git", args...)
			cmd.Dir = e.root
			out, err := cmd.Output()
			fmt.Fprintf(h, "git %s: %q %v\n", args[0], out, err)
		}
	}
	if err := hashTree(h, e.root); err != nil {
		return nil, err
	}
	e.base = h.Sum(nil)
	return e, nil
}

// findGo returns the go command: the one on PATH (go test puts its own
// first), else GOROOT's.
func findGo() (string, error) {
	if p, err := exec.LookPath("go"); err == nil {
		return filepath.Abs(p)
	}
	if gr := os.Getenv("GOROOT"); gr != "" {
		return filepath.Join(gr, "bin", "go"), nil
	}
	return "", errors.New("no go command on PATH")
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return "\n" + string(ee.Stderr)
	}
	return ""
}

// localReplace reports whether go.mod replaces a module by a directory.
func localReplace(gomod string) (bool, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, target, ok := strings.Cut(sc.Text(), "=>")
		if !ok {
			continue
		}
		target = strings.Trim(strings.TrimSpace(target), `"`)
		if strings.HasPrefix(target, ".") || strings.HasPrefix(target, "/") {
			return true, nil
		}
	}
	return false, sc.Err()
}

// hashTree writes the name, kind and content of every entry below root
// (the .git entry of the root excepted) to h, in a fixed order.
func hashTree(h io.Writer, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == ".git" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t.IsDir():
			fmt.Fprintf(h, "dir %q\n", rel)
		case t&fs.ModeSymlink != 0:
			// The go command follows a link to a file: its content
			// counts.
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(h, "link %q %q\n", rel, target)
			if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
				return hashFile(h, p)
			}
		case t.IsRegular():
			fmt.Fprintf(h, "file %q\n", rel)
			return hashFile(h, p)
		default:
			fmt.Fprintf(h, "other %q %v\n", rel, t)
		}
		return nil
	})
}

// hashFile writes the size, executable bits and content of the file at p
// to h.
func hashFile(h io.Writer, p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "%d %o\n", info.Size(), info.Mode().Perm()&0o111)
	_, err = io.Copy(h, f)
	return err
}

// key is the cache name of s's build.
func (e *buildEnv) key(s Spec) string {
	h := sha256.New()
	h.Write(e.base)
	tags := slices.Clone(s.Tags)
	slices.Sort(tags)
	fmt.Fprintf(h, "pkg %q tags %q race %v static %v\n", s.Pkg, tags, s.Race, s.static())
	return hex.EncodeToString(h.Sum(nil))[:32]
}

// static reports whether s is built with CGO_ENABLED=0, as the README,
// docs/operations.md and scripts/release build the commands: a static binary, no dynamic loader
// at start-up. A -race build needs cgo and keeps the go env's setting.
func (s Spec) static() bool { return !s.Race }

// goBuild builds s into dir/name.
func (e *buildEnv) goBuild(s Spec, dir string) (string, error) {
	out := filepath.Join(dir, s.name())
	cmd := exec.Command(e.goTool, append([]string{"build", "-o", out}, s.args()...)...)
	cmd.Dir = e.root
	if s.static() {
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", strings.Join(s.args(), " "), err, b)
	}
	return out, nil
}

func buildPrivate(e *buildEnv, s Spec) (string, error) {
	privateMu.Lock()
	defer privateMu.Unlock()
	if privateDir == "" {
		d, err := os.MkdirTemp("", "octet-testbin-")
		if err != nil {
			return "", err
		}
		privateDir = d
	}
	dir := filepath.Join(privateDir, e.key(s))
	if p := filepath.Join(dir, s.name()); isFile(p) {
		return p, nil
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	return e.goBuild(s, dir)
}

// cacheRoot returns the shared cache directory, created if need be.
func cacheRoot() (string, error) {
	dir := os.Getenv("OCTET_TESTBIN_DIR")
	if dir == "" {
		if c, err := os.UserCacheDir(); err == nil {
			dir = filepath.Join(c, "octet-testbin")
			if os.MkdirAll(dir, 0o700) != nil {
				dir = ""
			}
		}
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "octet-testbin-"+strconv.Itoa(os.Getuid()))
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	// Binaries are run from here: the directory must be the caller's
	// own and closed to others.
	info, err := os.Lstat(dir)
	if err != nil {
		return "", err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Getuid() || info.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("build cache %s is not a directory of this user closed to others", dir)
	}
	return dir, nil
}

const (
	keepUnused = 7 * 24 * time.Hour // a key directory not used for this long is removed
	keepTemp   = 24 * time.Hour     // a temporary directory this old is a crashed build's
	tempPrefix = "tmp-"
)

func buildShared(e *buildEnv, s Spec) (string, error) {
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	key := e.key(s)
	final := filepath.Join(root, key)
	unlock, err := lock(filepath.Join(root, key+".lock"), true)
	if err != nil {
		return "", err
	}
	defer unlock()
	bin := filepath.Join(final, s.name())
	if isFile(bin) {
		now := time.Now()
		os.Chtimes(final, now, now) // in use: not pruned
		return bin, nil
	}
	// A key directory without its binary is not one this package made:
	// move it out of the way.
	if _, err := os.Lstat(final); err == nil {
		if err := os.Rename(final, filepath.Join(root, tempPrefix+key+"-stale")); err != nil {
			if err := os.RemoveAll(final); err != nil {
				return "", err
			}
		}
	}
	tmp, err := os.MkdirTemp(root, tempPrefix+key+"-")
	if err != nil {
		return "", err
	}
	out, err := e.goBuild(s, tmp)
	if err == nil {
		err = syncFile(out)
	}
	if err == nil {
		err = os.Rename(tmp, final)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if d, err := os.Open(root); err == nil {
		d.Sync() // the rename is durable
		d.Close()
	}
	prune(root, key)
	return bin, nil
}

func isFile(p string) bool {
	info, err := os.Lstat(p)
	return err == nil && info.Mode().IsRegular()
}

func syncFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// lock takes flock(2) of path, exclusive, waiting when wait is set; the
// function returned releases it.
func lock(p string, wait bool) (func(), error) {
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	for {
		err = unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	// prune removes lock files: a lock taken on a file since unlinked
	// guards nothing, so take the one now at p.
	var held, now unix.Stat_t
	if unix.Fstat(int(f.Fd()), &held) != nil || unix.Stat(p, &now) != nil || held.Ino != now.Ino || held.Dev != now.Dev {
		f.Close()
		return lock(p, wait)
	}
	return func() { f.Close() }, nil
}

// prune removes the key directories not used for keepUnused and the
// temporary directories older than keepTemp, each under its key's lock
// (skipped when another process holds it), except the key just built.
func prune(root, keep string) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return
	}
	now := time.Now()
	for _, d := range entries {
		name := d.Name()
		info, err := d.Info()
		if err != nil || !d.IsDir() {
			continue
		}
		age := now.Sub(info.ModTime())
		if tmpKey, ok := strings.CutPrefix(name, tempPrefix); ok {
			if age > keepTemp && !strings.HasPrefix(tmpKey, keep) {
				os.RemoveAll(filepath.Join(root, name))
			}
			continue
		}
		if name == keep || age < keepUnused || !isHex(name) {
			continue
		}
		unlock, err := lock(filepath.Join(root, name+".lock"), false)
		if err != nil {
			continue
		}
		if info, err := os.Lstat(filepath.Join(root, name)); err == nil && now.Sub(info.ModTime()) >= keepUnused {
			os.RemoveAll(filepath.Join(root, name))
			os.Remove(filepath.Join(root, name+".lock"))
		}
		unlock()
	}
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && s != ""
}
