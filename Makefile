# TileKit: `make demo` runs the main job, `make test` the whole suite. Each installs
# what a fresh Debian 12 machine with only the Swift toolchain is missing.
SWIFT ?= swift
TILEKIT_RELEASE := .build/release/tilekit
TILEKIT_DEBUG := .build/debug/tilekit

.PHONY: all deps test-deps build demo test crash-check bench bench-curves fixtures fuzz fuzz-build clean

all: build

deps:
	@bash scripts/install-deps.sh

test-deps:
	@bash scripts/install-test-deps.sh

build: deps
	$(SWIFT) build -c release --product tilekit

# The MapQuest demo: prepares the three example maps from Debian and PyPI data (once; a
# second run reuses them) and serves them. Open the printed URL; Ctrl-C stops.
DEMO_PORT ?= 8080
demo: build
	@bash scripts/install-deps.sh osmium-tool gdal-bin
	@python3 scripts/prepare-examples.py $(TILEKIT_RELEASE)
	@echo ""
	@echo "  TileKit demo: open http://127.0.0.1:$(DEMO_PORT)/maps/central-park/  (the hero walks the Game Test route)"
	@echo "  also /maps/historic-overlay/ and /maps/magic-mountain/; Ctrl-C stops."
	@echo ""
	@$(TILEKIT_RELEASE) serve Examples/central-park/map.json Examples/historic-overlay/map.json Examples/magic-mountain/map.json --port $(DEMO_PORT) --quiet

# The cross-checks against reference tools run first so that swift test's summary is the last line.
# The command-line checks use the release build: what users run, and where the optimizer
# once exposed a bug the debug-built unit tests could not see. Every build fails on a compiler
# warning in the project's own modules (treatAllWarnings in Package.swift).
test: deps test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) build -c release --product tilekit
	python3 scripts/check-cli-against-mercantile.py $(TILEKIT_RELEASE)
	bash scripts/check-interop.sh $(TILEKIT_RELEASE)
	python3 scripts/check-server.py $(TILEKIT_RELEASE)
	python3 scripts/check-http-strict.py $(TILEKIT_RELEASE)
	python3 scripts/check-graceful-stop.py $(TILEKIT_RELEASE)
	python3 scripts/check-starvation.py $(TILEKIT_RELEASE)
	python3 scripts/check-pmtiles-http.py $(TILEKIT_RELEASE)
	python3 scripts/check-cluster.py $(TILEKIT_RELEASE)
	python3 scripts/check-pyramid.py $(TILEKIT_RELEASE)
	python3 scripts/check-crash-safety.py $(TILEKIT_RELEASE)
	python3 scripts/check-examples.py $(TILEKIT_RELEASE)
	python3 scripts/check-readme.py $(TILEKIT_RELEASE)
	$(SWIFT) test --skip-build

# kill -9 at 20 random moments of each writing command (make test kills each twice), and
# the full-disk checks. Not part of `make test`: a few minutes. CRASH_SEED picks the moments.
CRASH_RUNS ?= 20
CRASH_SEED ?= 11
crash-check: deps test-deps
	$(SWIFT) build -c release --product tilekit
	python3 scripts/check-crash-safety.py $(TILEKIT_RELEASE) --runs $(CRASH_RUNS) --seed $(CRASH_SEED)

# Fuzzing (Fuzz/README.md): each target in turn for FUZZ_SECONDS from its seed corpus, with
# executions, coverage and crashes per target; FUZZ_TARGETS picks some. The libFuzzer build
# (release, AddressSanitizer) is kept apart in .build/fuzz; a first build takes minutes.
# FUZZ_RUNS=N runs each target until N executions instead (FUZZ_SECONDS then defaults to no limit).
FUZZ_RUNS ?=
FUZZ_SECONDS ?= $(if $(FUZZ_RUNS),0,60)
FUZZ_TARGETS ?=
FUZZ_JOBS ?= 1
FUZZ_BINARY := .build/fuzz/release/tilekit-fuzz
fuzz: fuzz-build
	python3 Fuzz/run.py $(FUZZ_BINARY) --seconds $(FUZZ_SECONDS) $(if $(FUZZ_RUNS),--runs $(FUZZ_RUNS)) --jobs $(FUZZ_JOBS) $(FUZZ_TARGETS)

fuzz-build: deps
	@mkdir -p .build
	@echo "building the libFuzzer build of tilekit-fuzz (log: .build/fuzz-build.log)"
	@nice -n 10 $(SWIFT) build -c release --scratch-path .build/fuzz --product tilekit-fuzz \
		--sanitize fuzzer --sanitize address -Xswiftc -sanitize=fuzzer -Xswiftc -DFUZZING > .build/fuzz-build.log 2>&1 \
		|| { grep -v "Cannot export local symbol" .build/fuzz-build.log | tail -40; exit 1; }
	@tail -1 .build/fuzz-build.log

# Regenerates the committed mercantile/geographiclib fixture (seeded: same output).
fixtures: test-deps
	python3 -m pip install -q geographiclib==2.0
	python3 scripts/make-tilemath-fixture.py

# Speed beside reference tools, in one run, as ratios. Not part of `make test`.
bench: deps
	$(SWIFT) build -c release --product tilekit
	$(SWIFT) build -c release --product tilekit-bench
	bash scripts/install-deps.sh nginx-light python3-mapnik wrk gdal-bin libvips-tools redis-server
	python3 -c "import PIL, mapproxy, pmtiles, staticmap, staticmaps, gunicorn, mercantile, numpy" 2>/dev/null || python3 -m pip install -q --disable-pip-version-check pillow mapproxy==7.0.0 pmtiles==3.8.1 staticmap==0.5.7 py-staticmaps==0.4.0 gunicorn==23.0.0 mercantile==1.2.1 numpy==2.4.6
	python3 scripts/bench.py --json bench-results.json
	python3 scripts/soak.py $(TILEKIT_RELEASE) --minutes 10

# The scale curves of issue 15 (about 10 minutes; the first run also writes the 4096-32768 px
# test images into .cache/bench-images, ~4 more): pyramid time and memory against image size,
# 1 against 2 cores, serving from 32 to 1024 connections; plotted into docs/bench-*.png, the
# figures in bench-curves.json (and a copy beside the plots).
bench-curves: deps
	$(SWIFT) build -c release --product tilekit
	bash scripts/install-deps.sh nginx-light wrk gdal-bin libvips-tools
	python3 -c "import PIL, mercantile, numpy, matplotlib" 2>/dev/null || python3 -m pip install -q --disable-pip-version-check pillow mercantile==1.2.1 numpy==2.4.6 matplotlib==3.11.2
	python3 scripts/bench.py --curves --json bench-curves.json
	python3 scripts/plot-bench.py bench-curves.json --out docs
	cp bench-curves.json docs/bench-curves.json

clean:
	rm -rf .build out
