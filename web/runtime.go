package web

import (
	"bufio"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/framelake/framelake/internal/sqlitedb"
	"github.com/labstack/echo/v5"
)

// runtimeStats is what GET /api/v1/runtime tells of the server process, so
// a load test or a monitor can watch for growth of goroutines and memory.
type runtimeStats struct {
	Goroutines     int     `json:"goroutines"`
	HeapAllocBytes uint64  `json:"heapAllocBytes"` // live Go heap
	GoSysBytes     uint64  `json:"goSysBytes"`     // memory the Go runtime holds from the OS
	RSSBytes       int64   `json:"rssBytes"`       // resident memory of the process, C libraries' (libvips) included; 0 where /proc is missing
	OpenFiles      int     `json:"openFiles"`      // open file descriptors; 0 where /proc is missing
	UptimeSeconds  float64 `json:"uptimeSeconds"`
	// Writer is how write transactions used the database's one writer since
	// start: a long wait with short holds is a queue for the writer, long
	// holds are slow transactions.
	Writer *sqlitedb.WriterStats `json:"writer,omitempty"`
}

var processStart = time.Now()

func (s *server) runtimeRoutes(rest *echo.Group) {
	rest.GET("/runtime", s.runtimeStats)
}

func (s *server) runtimeStats(c *echo.Context) error {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	st := runtimeStats{Goroutines: runtime.NumGoroutine(), HeapAllocBytes: m.HeapAlloc, GoSysBytes: m.Sys,
		RSSBytes: residentBytes(), UptimeSeconds: time.Since(processStart).Seconds()}
	if s.Lake != nil {
		w := s.Lake.DB().WriterStats()
		st.Writer = &w
	}
	if fds, err := os.ReadDir("/proc/self/fd"); err == nil {
		st.OpenFiles = len(fds)
	}
	return c.JSON(http.StatusOK, st)
}

// residentBytes reads VmRSS from /proc/self/status.
func residentBytes() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
