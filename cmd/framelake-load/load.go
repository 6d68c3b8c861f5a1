package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/framelake/framelake/client"
	"github.com/framelake/framelake/lake/benchlake"
)

// pageSize is the page of every listing, the web grid's.
const pageSize = 20

// load is what the operations need to know of the lake, read once before
// the phases: how many files and collections' members there are, which
// collections exist and a sample of signed media links.
type load struct {
	c       *client.Client
	http    *http.Client
	cameras int
	files   int // files of the generated lake (unique names bench-img-<i>-x)
	perCam  int
	colls   []string // collection ids, camera i at i
	urls    []string
	jpegs   [][]byte
	maxPage int // 0: pages anywhere in a selection; else below maxPage only
	mu      sync.Mutex
	uploads int
	x       extras
}

// page picks a page of a selection of n files.
func (l *load) page(r *rand.Rand, n int) int {
	pages := n / pageSize
	if l.maxPage > 0 {
		pages = min(pages, l.maxPage)
	}
	return r.IntN(pages)
}

func newLoad(ctx context.Context, url, key, secret string, cameras int) (*load, error) {
	hc := &http.Client{Timeout: 60 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 1024, IdleConnTimeout: 90 * time.Second}}
	l := &load{c: client.New(url, key, secret, client.WithHTTPClient(hc)), http: hc, cameras: cameras}
	total, err := l.c.GetItemCountFromLake(ctx, "", `uniqueName ~ "bench-img-"`, nil)
	if err != nil {
		return nil, fmt.Errorf("count the lake: %w", err)
	}
	l.files = total[0].Count
	if l.files < pageSize*cameras {
		return nil, fmt.Errorf("the lake has %d generated files: build it with framelake-load lake", l.files)
	}
	cols, err := l.c.GetItemListFromDatalake(ctx, client.ItemQuery{ItemType: "image_collection", PageSize: 1000,
		SortOrder: &client.SortOrder{SortByField: "name", SortOrder: "ASC"}})
	if err != nil {
		return nil, err
	}
	byName := map[string]string{}
	for _, c := range cols {
		byName[c.Name] = c.ID
	}
	for i := 0; i < cameras; i++ {
		id, ok := byName[benchlake.Camera(i)]
		if !ok {
			return nil, fmt.Errorf("the lake has no collection %s: build it with framelake-load lake", benchlake.Camera(i))
		}
		l.colls = append(l.colls, id)
	}
	l.perCam = l.files / cameras
	items, err := l.c.GetItemListFromDatalake(ctx, client.ItemQuery{PageSize: 1000})
	if err != nil {
		return nil, err
	}
	var sample []string
	for _, it := range items {
		l.urls = append(l.urls, it.URL)
		sample = append(sample, it.UniqueName)
	}
	for i := 0; i < 64; i++ {
		b, err := benchlake.JPEG(1000 + i)
		if err != nil {
			return nil, err
		}
		l.jpegs = append(l.jpegs, b)
	}
	return l, l.setupExtras(ctx, url, key, secret, sample)
}

// op is one kind of request and its share of the mix (weights sum to 100).
type op struct {
	name   string
	weight int
	do     func(ctx context.Context, l *load, r *rand.Rand) error
}

// ops is the mix: the lake's operations and the extras (extras.go).
var ops = append(lakeOps[:len(lakeOps):len(lakeOps)], extraOps...)

var lakeOps = []op{
	{"list", 15, func(ctx context.Context, l *load, r *rand.Rand) error {
		_, err := l.c.GetItemListFromDatalake(ctx, client.ItemQuery{PageIndex: l.page(r, l.files)})
		return err
	}},
	{"list name=", 8, func(ctx context.Context, l *load, r *rand.Rand) error {
		i, want := r.IntN(l.files), 1
		name := benchlake.FileName(i)
		if r.IntN(4) == 0 { // a name no file has
			name, want = "no-"+name, 0
		}
		got, err := l.c.GetItemListFromDatalake(ctx, client.ItemQuery{Query: fmt.Sprintf("name = %q", name)})
		if err == nil && len(got) < want {
			err = fmt.Errorf("name = %q listed %d files, want %d", name, len(got), want)
		}
		return err
	}},
	{"list collection=", 8, func(ctx context.Context, l *load, r *rand.Rand) error {
		q := "collection = " + benchlake.Camera(r.IntN(l.cameras))
		return l.listFull(ctx, client.ItemQuery{Query: q, PageIndex: l.page(r, l.perCam)})
	}},
	{"collection files", 7, func(ctx context.Context, l *load, r *rand.Rand) error {
		page := l.page(r, l.perCam)
		got, err := l.c.GetItemListFromCollection(ctx, l.colls[r.IntN(len(l.colls))], client.ItemQuery{PageIndex: page})
		if err == nil && len(got) != pageSize {
			err = fmt.Errorf("collection page %d listed %d files, want %d", page, len(got), pageSize)
		}
		return err
	}},
	{"list metadata=", 8, func(ctx context.Context, l *load, r *rand.Rand) error {
		q := "metadata.camera = " + benchlake.Camera(r.IntN(l.cameras))
		return l.listFull(ctx, client.ItemQuery{Query: q, PageIndex: l.page(r, l.perCam)})
	}},
	{"count collection=", 4, func(ctx context.Context, l *load, r *rand.Rand) error {
		return l.countAtLeast(ctx, "collection = "+benchlake.Camera(r.IntN(l.cameras)), l.perCam)
	}},
	{"count metadata=", 4, func(ctx context.Context, l *load, r *rand.Rand) error {
		return l.countAtLeast(ctx, "metadata.camera = "+benchlake.Camera(r.IntN(l.cameras)), l.perCam)
	}},
	{"count name=", 4, func(ctx context.Context, l *load, r *rand.Rand) error {
		return l.countAtLeast(ctx, fmt.Sprintf("name = %q", benchlake.FileName(r.IntN(l.files))), 1)
	}},
	{"file details", 14, func(ctx context.Context, l *load, r *rand.Rand) error {
		_, err := l.c.GetFileDetails(ctx, benchlake.UniqueName(r.IntN(l.files)), nil)
		return err
	}},
	{"media", 8, func(ctx context.Context, l *load, r *rand.Rand) error {
		return l.media(ctx, l.urls[r.IntN(len(l.urls))])
	}},
	{"upload", 4, func(ctx context.Context, l *load, r *rand.Rand) error {
		l.mu.Lock()
		l.uploads++
		n := l.uploads
		l.mu.Unlock()
		b := l.jpegs[r.IntN(len(l.jpegs))]
		f := client.UploadFile{Name: fmt.Sprintf("load-%d-%d.jpg", time.Now().UnixNano(), n),
			Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }}
		res, err := l.c.UploadFiles(ctx, client.UploadOptions{Collection: "load-uploads"}, f)
		if err == nil && len(res.Stored)+len(res.Skipped) != 1 {
			err = fmt.Errorf("upload stored %d files, rejected %v", len(res.Stored), res.Rejected)
		}
		return err
	}},
	{"metadata patch", 4, func(ctx context.Context, l *load, r *rand.Rand) error {
		_, err := l.c.PatchFileMetadata(ctx, benchlake.UniqueName(r.IntN(l.files)), map[string]any{"note": r.IntN(1000)})
		return err
	}},
}

// listFull lists q and checks the page is full: every page the load asks
// for lies inside the selection.
func (l *load) listFull(ctx context.Context, q client.ItemQuery) error {
	got, err := l.c.GetItemListFromDatalake(ctx, q)
	if err == nil && len(got) != pageSize {
		err = fmt.Errorf("%s page %d listed %d files, want %d", q.Query, q.PageIndex, len(got), pageSize)
	}
	return err
}

func (l *load) countAtLeast(ctx context.Context, q string, want int) error {
	got, err := l.c.GetItemCountFromLake(ctx, "", q, nil)
	if err == nil && (len(got) != 1 || got[0].Count < want) {
		err = fmt.Errorf("count of %s is %v, want at least %d", q, got, want)
	}
	return err
}

func (l *load) media(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := l.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err == nil && (resp.StatusCode != http.StatusOK || n == 0) {
		err = fmt.Errorf("media: %s, %d bytes", resp.Status, n)
	}
	return err
}

// phase runs clients workers for d, each picking operations from the mix at
// random, and returns what each operation took.
func (l *load) phase(ctx context.Context, clients int, d time.Duration, seed uint64) *results {
	deck := make([]int, 0, 100)
	for i, o := range ops {
		for range o.weight {
			deck = append(deck, i)
		}
	}
	res := newResults()
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range clients {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			mine := newResults()
			for ctx.Err() == nil {
				o := ops[deck[r.IntN(len(deck))]]
				t := time.Now()
				err := o.do(ctx, l, r)
				if ctx.Err() != nil { // cut by the end of the phase: not a result
					break
				}
				mine.add(o.name, time.Since(t), err)
			}
			res.merge(mine)
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	return res
}
