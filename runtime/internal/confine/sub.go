package confine

import "golang.org/x/sys/unix"

// OpenDir opens the directory at the path p beneath r as a Root of its
// own, with the same confinement: no link is followed on the way to it or
// inside it, and nothing above it can be reached through the new Root. The
// new Root accepts relative paths only (an absolute path fails with
// ErrEscape), so it never names where it lies on the host. Resource layers
// and skill folders are opened this way. The caller closes it;
// it stays valid after r is closed.
func (r *Root) OpenDir(p string) (*Root, error) {
	rel, err := r.Rel(p)
	if err != nil {
		return nil, err
	}
	fd, err := r.openRel(rel, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, pathErr("open", rel, err)
	}
	return &Root{fd: fd, walkOnly: r.walkOnly}, nil
}
