# Packwright build. Every target that compiles cgo code first makes HiGHS available (hack/install-highs.sh: the
# system library through pkg-config, or PyPI's highsbox in a cache outside the clone) and points PKG_CONFIG_PATH
# at it; the .pc carries an rpath, so binaries and tests need no LD_LIBRARY_PATH.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
GO ?= go
BIN := bin
PKGS := ./...
BENCH ?= .
BENCHTIME ?= 1x

# WITH_HIGHS prefixes a recipe line with the HiGHS environment.
WITH_HIGHS = pc="$$(hack/install-highs.sh)"; export PKG_CONFIG_PATH="$$pc$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH}";

.PHONY: all build run test vet bench highs generate clean

all: build

highs:
	@hack/install-highs.sh >/dev/null

build:
	@$(WITH_HIGHS) $(GO) build -o $(BIN)/packwright ./cmd/packwright

# run is the main job on an embedded default: a what-if plan of the embedded sample cluster snapshot.
run: build
	$(BIN)/packwright plan

vet:
	@$(WITH_HIGHS) $(GO) vet $(PKGS)

# test installs what the tests need (HiGHS, the moto EC2 emulator, a kube-apiserver/etcd control plane built from
# its Go modules: about 20 minutes once, cached outside the clone; the Helm CLI, about 5 minutes once), vets,
# checks the no-cgo build, then runs every test with the race detector.
test:
	@$(WITH_HIGHS) \
	moto="$$(hack/install-moto.sh)"; export PACKWRIGHT_MOTO_SERVER="$$moto"; \
	cp="$$(hack/install-control-plane.sh)"; export PACKWRIGHT_CONTROL_PLANE="$$cp"; \
	helm="$$(hack/install-helm.sh)"; export PACKWRIGHT_HELM="$$helm"; \
	echo "== go vet"; $(GO) vet $(PKGS); \
	echo "== CGO_ENABLED=0 build and HiGHS-less tests"; CGO_ENABLED=0 $(GO) build $(PKGS); \
	CGO_ENABLED=0 $(GO) test -count=1 ./solver/highs/; \
	echo "== go test -race"; $(GO) test -race -count=1 -timeout 30m $(PKGS)

bench:
	@$(WITH_HIGHS) \
	cp="$$(hack/install-control-plane.sh)"; export PACKWRIGHT_CONTROL_PLANE="$$cp"; \
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -benchmem -timeout 60m $(PKGS)

generate:
	@if [ -x hack/generate.sh ]; then hack/generate.sh; fi

clean:
	rm -rf $(BIN)
