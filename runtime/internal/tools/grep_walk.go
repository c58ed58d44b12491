package tools

import (
	"context"
	"io/fs"
	"runtime"
	"sync"
)

type grepJob struct {
	seq int
	rel string
}

// grepWorkers returns how many files grep searches at once: one per
// processor, at most grepMaxWorkers, so that memory does not grow with
// GOMAXPROCS.
func grepWorkers() int { return min(runtime.GOMAXPROCS(0), grepMaxWorkers) }

// grepTree walks start on the calling goroutine and searches its files on
// grepWorkers workers. It returns after every worker has finished.
func grepTree(ctx context.Context, job grepParams, glob *matcher, start string, g *gather) error {
	root := job.root
	workers := grepWorkers()
	jobs := make(chan grepJob, 4*workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			sc := getScratch()
			defer putScratch(sc)
			for j := range jobs {
				var h *fileHits
				if ctx.Err() == nil {
					// Errors (a file removed or replaced since the
					// walk listed it, a binary file, the search
					// canceled) only skip it.
					h, _ = job.file(ctx, j.rel, sc, false)
				}
				g.done(j.seq, h)
			}
		})
	}
	ig := newIgnorer(root)
	ig.loadAncestors(start)
	seq := 0
	err := root.Walk(start, func(rel string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if err != nil {
			if rel == start {
				return err
			}
			return nil // an unreadable subdirectory is skipped
		}
		if rel != start && (d.Name() == ".git" || ig.ignored(rel, d.IsDir())) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			ig.load(rel)
			return nil
		}
		if !d.Type().IsRegular() || glob != nil && !glob.match(rel) {
			return nil
		}
		select {
		case jobs <- grepJob{seq: seq, rel: rel}:
			seq++
			return nil
		case <-ctx.Done():
			return fs.SkipAll
		}
	})
	close(jobs)
	wg.Wait()
	return err
}
