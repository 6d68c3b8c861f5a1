package main

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"text/tabwriter"
	"time"
)

// results holds the latencies and errors of each operation of a phase.
type results struct {
	mu      sync.Mutex
	took    map[string][]time.Duration
	errs    map[string]int
	first   map[string]error // first error of each operation, to show what failed
	elapsed time.Duration
}

func newResults() *results {
	return &results{took: map[string][]time.Duration{}, errs: map[string]int{}, first: map[string]error{}}
}

func (r *results) add(name string, d time.Duration, err error) {
	r.took[name] = append(r.took[name], d)
	if err != nil {
		r.errs[name]++
		if r.first[name] == nil {
			r.first[name] = err
		}
	}
}

func (r *results) merge(o *results) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for name, ds := range o.took {
		r.took[name] = append(r.took[name], ds...)
		r.errs[name] += o.errs[name]
		if r.first[name] == nil {
			r.first[name] = o.first[name]
		}
	}
}

// print writes one row per operation, in the mix's order, and a total row.
func (r *results) print(w io.Writer, title string) {
	names := make([]string, len(ops))
	for i, o := range ops {
		names[i] = o.name
	}
	r.printRows(w, title, names)
}

// printRows writes one row per named operation and a total row.
func (r *results) printRows(w io.Writer, title string, names []string) {
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tcount\terrors\tp50 ms\tp90 ms\tp99 ms\tmax ms\treq/s\t")
	var all []time.Duration
	errors := 0
	for _, name := range names {
		ds := r.took[name]
		all = append(all, ds...)
		errors += r.errs[name]
		r.row(tw, name, ds, r.errs[name])
	}
	r.row(tw, "total", all, errors)
	tw.Flush()
	for _, name := range names {
		if err := r.first[name]; err != nil {
			fmt.Fprintf(w, "first error of %s: %v\n", name, err)
		}
	}
}

func (r *results) row(w io.Writer, name string, ds []time.Duration, errors int) {
	slices.Sort(ds)
	q := func(p float64) string {
		if len(ds) == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Microseconds())/1000)
	}
	fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%.1f\t\n", name, len(ds), errors, q(0.5), q(0.9), q(0.99), q(1),
		float64(len(ds))/r.elapsed.Seconds())
}
