# The two commands of the README: `make demo` (main job on the embedded default) and `make test`.
GO ?= go

# The repository's own targets keep their assets in ./.rated (an installed rated uses
# ~/.local/share/rated); RATED_ASSETS, the older name, still chooses the folder when set.
RATED_HOME ?= $(or $(RATED_ASSETS),$(CURDIR)/.rated)
export RATED_HOME
# The targets run bin/rated, built with the VCS commit stamped in (`rated --version` and every
# output's provenance; `go run` does not stamp), even where the Go environment turns stamping off.
RATED := bin/rated

.PHONY: build demo test test-short setup vet bench reproduce finetune-syn

build:
	$(GO) build -buildvcs=auto -o $(RATED) .

# The main job on the embedded default benchmark, set-up included: installs the ONNX Runtime
# library and the encoders (dense retrieval; skipped when already there), then writes Table 2.
demo: build
	$(RATED) setup onnxruntime models
	$(RATED) eval dynamic --out runs/default

setup: build
	$(RATED) setup all

# Installs the reference tools, libraries and models first, then runs every test with missing
# assets treated as failures rather than skips. The timeout leaves room for the fine-tuning
# tests on a busy 2-core machine (Go's default of 10 minutes per package is too tight there).
test: setup
	RATED_REQUIRE_ASSETS=1 $(GO) test -timeout 45m ./...

# Tests that need nothing installed; asset-backed tests skip with a hint.
test-short:
	$(GO) test ./...

vet:
	gofmt -l . | tee /dev/stderr | (! read)
	$(GO) vet ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

# Regenerates Tables 1-3 on the embedded default and compares every cell with
# pkg/reproduce/expected/default.json ([OK] or the difference per cell).
reproduce: build
	$(RATED) setup onnxruntime models
	$(RATED) reproduce --out runs/reproduce

# The paper's fine-tuning chain: local Gemma -> EcoAgent-Syn (build-bench) -> rated finetune ->
# Table 1 of the frozen and fine-tuned encoders (scripts/finetune-syn.sh; about 40 min on 2 cores).
finetune-syn:
	bash scripts/finetune-syn.sh
