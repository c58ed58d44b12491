package resources

import (
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"octet.dev/host/runtime/internal/confine"
)

// Cache keeps what Skills and Extensions read from the layers between the
// runs of one agent, so that an unchanged tree is not read and parsed again
// at every run's start. It is safe for concurrent use: runs start
// concurrently on one agent.
//
// Nothing is trusted without a stat: every run still stats, beneath its
// layer (no final link followed), each folder it would list (skills/,
// extensions/) and each SKILL.md and extension.json it would read, and
// compares device, inode, mode, size, modification time and change time
// with what they were when the cached result was read. Any difference
// reads that folder or file again, so a change is seen at the next run:
// an edited, added, removed or replaced (renamed over) skill or manifest,
// a skill or extension folder added, removed, renamed or replaced by a
// link (each changes the folder listing it). A skill folder itself is not
// stat'ed: what it holds besides SKILL.md is read when the model asks.
//
// A file rewritten with the same size within the file system's timestamp
// granularity (a clock tick, a few milliseconds) keeps its modification and
// change times, and a stat cannot tell. So a result is cached only when
// every time it was validated with was at least racyWindow old when it was
// read (as git does with its index); a younger one is read again at every
// run until it has settled. Changing a file's modification time back
// (touch -d) is seen too: the change time moves.
//
// The context files (AGENTS.md) are small and read at every run, as are
// the directory listings of a layer root.
type Cache struct {
	mu     sync.Mutex
	dirs   map[cacheKey]cachedDir
	skills map[cacheKey]cachedSkill
	exts   map[cacheKey]cachedExt
	now    func() time.Time // time.Now; tests may move it
	reads  atomic.Int64     // folders listed and files read past the cache (tests)
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{dirs: map[cacheKey]cachedDir{}, skills: map[cacheKey]cachedSkill{}, exts: map[cacheKey]cachedExt{}, now: time.Now}
}

// racyWindow is how old a stamp's times must be for its result to be
// cached: more than the coarsest timestamp granularity of Linux (one tick
// at HZ=100, 10 ms).
const racyWindow = 50 * time.Millisecond

// maxCacheEntries bounds each map of a cache; past it the map starts over.
const maxCacheEntries = 4096

// layerID tells one layer directory from another: its device and inode.
type layerID struct{ dev, ino uint64 }

// cacheKey is a folder of a layer: the layer's name (results name it) and
// directory, and the folder relative to it.
type cacheKey struct {
	layer string
	id    layerID
	rel   string
}

// stamp is what a stat says of a path; the zero stamp is a path that
// cannot be stat'ed (missing, a link on the way, ...).
type stamp struct {
	dev, ino     uint64
	mode         uint32
	size         int64
	mtime, ctime unix.Timespec
}

type cachedDir struct {
	st   stamp
	ents []fs.DirEntry
}

// cachedSkill is a skill folder's parsed SKILL.md (or why it is not a
// skill), valid while the SKILL.md's stamp is file.
type cachedSkill struct {
	file stamp
	k    Skill // open is set again for each run's layer
	d    *Diagnostic
}

// cachedExt is an extension folder's finding, valid while its manifest's
// stamp is file.
type cachedExt struct {
	file stamp
	f    ExtensionFinding
}

// stampOf stats rel beneath root without following a final link, in one
// system call (confine.Root.StatForChange): it only validates what was
// read before through the root.
func stampOf(root *confine.Root, rel string) stamp {
	var st unix.Stat_t
	if root.StatForChange(rel, &st) != nil {
		return stamp{}
	}
	return stamp{dev: st.Dev, ino: st.Ino, mode: st.Mode, size: st.Size, mtime: st.Mtim, ctime: st.Ctim}
}

// settled reports whether st's times are old enough at now to be trusted
// later (see Cache). The zero stamp is: its path appearing changes the
// folder holding it.
func (st stamp) settled(now time.Time) bool {
	if st == (stamp{}) {
		return true
	}
	t := max(st.mtime.Nano(), st.ctime.Nano())
	return now.UnixNano()-t > int64(racyWindow)
}

func idOf(root *confine.Root) layerID {
	st := stampOf(root, ".")
	return layerID{dev: st.dev, ino: st.ino}
}

// key is the cache key of rel in layer l, false when l cannot be cached.
func (c *Cache) key(l *Layer, rel string) (cacheKey, bool) {
	if c == nil || l.id == (layerID{}) {
		return cacheKey{}, false
	}
	return cacheKey{layer: l.Name, id: l.id, rel: rel}, true
}

// put stores v under k in m, starting m over when it is full.
func put[V any](m map[cacheKey]V, k cacheKey, v V) {
	if _, ok := m[k]; !ok && len(m) >= maxCacheEntries {
		clear(m)
	}
	m[k] = v
}

// readDir lists the folder rel of layer l, from the cache when the
// folder's stamp is unchanged.
func (s *Set) readDir(l *Layer, rel string) ([]fs.DirEntry, error) {
	c := s.cache
	k, ok := c.key(l, rel)
	if !ok {
		return l.Root.ReadDir(rel)
	}
	now := c.now()
	st := stampOf(l.Root, rel)
	if st == (stamp{}) {
		return l.Root.ReadDir(rel) // the error (or a race) as it is
	}
	c.mu.Lock()
	e, hit := c.dirs[k]
	c.mu.Unlock()
	if hit && e.st == st {
		return e.ents, nil
	}
	c.reads.Add(1)
	ents, err := l.Root.ReadDir(rel)
	if err == nil && st.settled(now) {
		c.mu.Lock()
		put(c.dirs, k, cachedDir{st: st, ents: ents})
		c.mu.Unlock()
	}
	return ents, err
}

// skill is parseSkill through the cache.
func (s *Set) skill(l *Layer, name string, buf *[]byte) (Skill, *Diagnostic) {
	c := s.cache
	dir := SkillsDir + "/" + name
	k, ok := c.key(l, dir)
	if !ok {
		return s.parseSkill(l, name, frontMatterBuf(buf))
	}
	now := c.now()
	fst := stampOf(l.Root, dir+"/SKILL.md")
	c.mu.Lock()
	e, hit := c.skills[k]
	c.mu.Unlock()
	if hit && e.file == fst {
		return withRoot(e.k, l.Root, dir), copyDiag(e.d)
	}
	c.reads.Add(1)
	sk, d := s.parseSkill(l, name, frontMatterBuf(buf))
	if fst.settled(now) {
		c.mu.Lock()
		put(c.skills, k, cachedSkill{file: fst, k: withRoot(sk, nil, ""), d: copyDiag(d)})
		c.mu.Unlock()
	}
	return sk, d
}

// frontMatterBuf returns *buf, allocated on first use: a run whose skills
// all come from the cache allocates none.
func frontMatterBuf(buf *[]byte) []byte {
	if *buf == nil {
		*buf = make([]byte, maxFrontMatterBytes)
	}
	return *buf
}

// withRoot returns k opening its folder dir beneath root (a cached skill
// holds no descriptor: each run has its own layers).
func withRoot(k Skill, root *confine.Root, dir string) Skill {
	if root == nil || k.Name == "" {
		k.open = nil
		return k
	}
	k.open = func() (*confine.Root, error) { return root.OpenDir(dir) }
	return k
}

func copyDiag(d *Diagnostic) *Diagnostic {
	if d == nil {
		return nil
	}
	c := *d
	return &c
}

// extension is examineExtension through the cache.
func (s *Set) extension(c *extCandidate, name string, buf *[]byte) ExtensionFinding {
	ca := s.cache
	dir := ExtensionsDir + "/" + name
	k, ok := ca.key(c.layer, dir)
	if !ok || c.link {
		return examineExtension(c, name, manifestBuf(buf))
	}
	now := ca.now()
	fst := stampOf(c.layer.Root, dir+"/"+ManifestFile)
	ca.mu.Lock()
	e, hit := ca.exts[k]
	ca.mu.Unlock()
	if hit && e.file == fst {
		return e.f
	}
	ca.reads.Add(1)
	f := examineExtension(c, name, manifestBuf(buf))
	if fst.settled(now) {
		ca.mu.Lock()
		put(ca.exts, k, cachedExt{file: fst, f: f})
		ca.mu.Unlock()
	}
	return f
}

// manifestBuf is frontMatterBuf for manifests.
func manifestBuf(buf *[]byte) []byte {
	if *buf == nil {
		*buf = make([]byte, MaxManifestBytes)
	}
	return *buf
}
