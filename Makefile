# offshoot — set-up and checks. `make demo` and `make test` work on a fresh machine.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
STAMP := node_modules/.offshoot-install-stamp
TSC := node_modules/.bin/tsc
BIOME := node_modules/.bin/biome

.PHONY: all install build check format test demo bench fuzz torture clean

all: build

$(STAMP): package.json package-lock.json packages/offshoot/package.json packages/client/package.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

install: $(STAMP)

build: install
	$(TSC) -p packages/client/tsconfig.json
	$(TSC) -p packages/offshoot/tsconfig.json
	node scripts/bundle-cli.mjs

check: install
	$(BIOME) check .
	node scripts/check-layers.mjs
	$(TSC) -p packages/offshoot/tsconfig.check.json
	$(TSC) -p packages/client/tsconfig.check.json

test: build check
	scripts/with-s3-server.sh scripts/run-tests.sh

demo: build
	scripts/demo.sh

bench: build
	scripts/with-s3-server.sh node --import tsx packages/offshoot/bench/run.ts

fuzz: build
	OFFSHOOT_FUZZ_CASES=$${OFFSHOOT_FUZZ_CASES:-500000} scripts/run-tests.sh fuzz

# One torture at a time, each with the machine to itself; LANES sets the daemon torture's concurrent sessions.
torture: build
	OFFSHOOT_TEST_CONCURRENCY=1 OFFSHOOT_TORTURE_LANES=$${LANES:-6} OFFSHOOT_TORTURE_SECONDS=$${DURATION:-300} scripts/run-tests.sh torture

format: install
	$(BIOME) check --write .

clean:
	rm -rf packages/*/dist
