package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"text/tabwriter"
	"time"

	"github.com/framelake/framelake/analysis"
	"github.com/framelake/framelake/appliance"
)

func cmdModel(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return errors.New("usage: framelake model serve NAME --addr HOST:PORT | framelake model list [flags]")
	}
	fs := flag.NewFlagSet("model "+args[0], flag.ContinueOnError)
	data := fs.String("data", envOr("FRAMELAKE_DATA", "./framelake-data"), "data folder (env FRAMELAKE_DATA)")
	switch args[0] {
	case "serve":
		addr := fs.String("addr", "127.0.0.1:8081", "listen address of the SageMaker-compatible endpoint")
		logFormat := fs.String("log-format", envOr("FRAMELAKE_LOG_FORMAT", "text"), "log format: text or json")
		if err := parse(fs, args[1:], 1); err != nil {
			return err
		}
		log, err := newLogger(*logFormat)
		if err != nil {
			return err
		}
		return serveModel(ctx, *data, fs.Arg(0), *addr, log)
	case "list":
		asJSON := fs.Bool("json", false, "print JSON")
		if err := parse(fs, args[1:], 0); err != nil {
			return err
		}
		return listModels(ctx, *data, *asJSON, os.Stdout)
	}
	return fmt.Errorf("unknown model command %q: use serve or list", args[0])
}

// serveModel serves a registered package over the SageMaker protocol
// (GET /ping, POST /invocations), so another framelake can use it with
// inference_platform aws and the model can live on a GPU host.
func serveModel(ctx context.Context, data, name, addr string, log *slog.Logger) error {
	// No job workers: a server may be running on the same data folder.
	a, err := appliance.Open(ctx, appliance.Config{DataDir: data, JobWorkers: -1, Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := a.Analysis.LocalRunner(ctx, name)
	if err != nil {
		return err
	}
	defer r.Close()
	if err := r.Ping(ctx); err != nil { // load it now: a broken package fails here, not at the first request
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: analysis.InvocationHandler(r, 1<<30), ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- srv.Shutdown(sctx)
	}()
	log.Info("serving model", "model", name, "addr", ln.Addr().String(), "ping", "http://"+ln.Addr().String()+"/ping")
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return <-done
}

func listModels(ctx context.Context, data string, asJSON bool, w io.Writer) error {
	a, err := appliance.Open(ctx, appliance.Config{DataDir: data, JobWorkers: -1,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	defer a.Close()
	ms, err := a.Analysis.Models(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		return json.NewEncoder(w).Encode(ms)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tAPPLICATION\tDEFAULT\tENDPOINT\tCREATED")
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", m.Name, m.Application, m.SystemDefault, m.Endpoint, m.CreatedAt.Format(time.RFC3339))
	}
	return tw.Flush()
}
