package analysis

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"github.com/framelake/framelake/errs"
)

// pool holds the local runners, one per model, and bounds how many Python
// workers live at once: a start beyond Options.MaxWorkers first stops the
// least recently used idle worker, or waits for one to finish its call.
type pool struct {
	opt    Options
	log    *slog.Logger
	script string

	mu      sync.Mutex
	runners map[string]*localRunner // by model id
	live    int                     // workers started and not yet exited
	changed chan struct{}           // closed and replaced when a slot frees
	closed  bool

	quit chan struct{}
	wg   sync.WaitGroup
}

func newPool(opt Options, log *slog.Logger, script string) *pool {
	p := &pool{opt: opt, log: log, script: script, runners: map[string]*localRunner{},
		changed: make(chan struct{}), quit: make(chan struct{})}
	p.wg.Add(1)
	go p.janitor()
	return p
}

// runner returns the runner of m, creating it on first use.
func (p *pool) runner(m Model) (*localRunner, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errs.New(errs.Unavailable, "", "analysis is shutting down")
	}
	r := p.runners[m.ID]
	if r == nil {
		r = &localRunner{pool: p, model: m, sem: make(chan struct{}, 1)}
		p.runners[m.ID] = r
	}
	return r, nil
}

// drop stops and forgets the runner of a model (deleted or replaced).
func (p *pool) drop(modelID string) {
	p.mu.Lock()
	r := p.runners[modelID]
	delete(p.runners, modelID)
	p.mu.Unlock()
	if r != nil {
		r.Close()
	}
}

// acquire takes a worker slot for self.
func (p *pool) acquire(ctx context.Context, self *localRunner) error {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return errs.New(errs.Unavailable, "", "analysis is shutting down")
		}
		if p.live < p.opt.MaxWorkers {
			p.live++
			p.mu.Unlock()
			return nil
		}
		victims := p.idleLocked(self)
		wait := p.changed
		p.mu.Unlock()
		for _, v := range victims {
			if v.tryStop("evicted") {
				break
			}
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return fmt.Errorf("waiting for a free model worker (at most %d run at once): %w", p.opt.MaxWorkers, ctx.Err())
		case <-time.After(time.Second):
		}
	}
}

// idleLocked lists runners with a worker other than self, least recently used first.
func (p *pool) idleLocked(self *localRunner) []*localRunner {
	var out []*localRunner
	for _, r := range p.runners {
		if r == self {
			continue
		}
		r.mu.Lock()
		has := r.proc != nil
		r.mu.Unlock()
		if has {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].used().Before(out[j].used()) })
	return out
}

func (r *localRunner) used() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastUsed
}

// tryStop stops r's worker unless a call holds it.
func (r *localRunner) tryStop(why string) bool {
	select {
	case r.sem <- struct{}{}:
	default:
		return false
	}
	defer r.unlock()
	r.mu.Lock()
	has := r.proc != nil
	r.mu.Unlock()
	if has {
		r.pool.log.Info("stopping model worker", "model", r.model.Name, "why", why)
		r.stop(why)
	}
	return has
}

func (p *pool) release() {
	p.mu.Lock()
	p.live--
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// janitor stops workers idle longer than IdleTimeout.
func (p *pool) janitor() {
	defer p.wg.Done()
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("model worker janitor panicked", "panic", v, "stack", string(debug.Stack()))
		}
	}()
	every := min(p.opt.IdleTimeout/2, 30*time.Second)
	tick := time.NewTicker(max(every, 50*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-p.quit:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		idle := p.idleLocked(nil)
		p.mu.Unlock()
		for _, r := range idle {
			if time.Since(r.used()) > p.opt.IdleTimeout {
				r.tryStop("idle")
			}
		}
	}
}

func (p *pool) close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	runners := make([]*localRunner, 0, len(p.runners))
	for _, r := range p.runners {
		runners = append(runners, r)
	}
	p.mu.Unlock()
	close(p.quit)
	p.wg.Wait()
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Go(func() { r.Close() })
	}
	wg.Wait()
	return nil
}
