# Courier — every target does its own set-up on a fresh Debian machine (see README.md).
#
#   make demo      start a local server and show the CLI and the library at work
#   make test      unit + integration tests (Swift, C, Python), and the public API listing
#   make api       record a deliberate change of the public Swift API (Tests/API/Courier.api)
#   make bench     Courier beside libcurl, wrk and URLSession (writes benchmarks/RESULTS.md)
#   make install   PREFIX=/usr/local: courier.h, libcourier.so, courier.pc and the courier CLI
#   make python-wheel   dist/courier_http-*.whl: the Python package with the library inside
#   make fuzz      every fuzz target under libFuzzer for FUZZ_SECONDS (default 60) each
#   make test-asan, make test-tsan   the CLI, the benchmark driver and C programs under a sanitizer
#   make soak      ten million requests with memory and descriptors sampled (benchmarks/SOAK.md)

SHELL         := /bin/bash
PREFIX        ?= /usr/local
# Where llhttp goes when the system has no `libllhttp` pkg-config package (Debian 12).
LLHTTP_PREFIX ?= /usr/local
SUDO          := $(if $(filter 0,$(shell id -u)),,sudo)
SWIFT         ?= swift

CORE_PACKAGES  := libuv1-dev libssl-dev zlib1g-dev libbrotli-dev libzstd-dev libnghttp2-dev pkg-config gcc make
TEST_PACKAGES  := nginx openssl valgrind python3 python3-dev python3-venv python3-setuptools python3-wheel python3-pip iproute2 libcurl4 curl \
                  nghttp2-server python3-h2 nftables
# The interop matrix's servers (Tests/Interop): independent HTTP implementations, plus Debian's Go
# to build a net/http server. uvicorn and Starlette come from PyPI into .build/interop-venv.
INTEROP_PACKAGES := apache2 caddy h2o lighttpd lighttpd-mod-deflate lighttpd-mod-openssl libnginx-mod-http-brotli-filter golang-go
INTEROP_PYPI     := uvicorn==0.55.0 starlette==1.10.0
DEMO_PACKAGES  := nginx python3 openssl
BENCH_PACKAGES := nginx wrk libcurl4-openssl-dev gnuplot-nox valgrind strace python3 nghttp2-client
# The slow-network scenarios (benchmarks/scenario): namespaces and htb (iproute2), loss (nftables),
# nginx for the thumbnails.
SCENARIO_PACKAGES := iproute2 nftables gnuplot-nox curl python3 nginx

.PHONY: scenario api interop-deps python-wheel python-speedups python-site bench-bulk soak test-asan test-tsan fuzz install-files all deps core-packages test-deps demo-deps bench-deps llhttp build test demo bench install clean

all: build

# Installs only what is missing, so a prepared machine pays one dpkg-query per package.
# `apt-get update` runs once, and only when something must be installed. A policy-rc.d that
# refuses service starts keeps the nginx package from starting a system nginx on port 80.
define ensure_packages
	@missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "courier: installing Debian packages:$$missing"; \
	  policy=""; if [ ! -e /usr/sbin/policy-rc.d ]; then \
	    printf '#!/bin/sh\nexit 101\n' | $(SUDO) tee /usr/sbin/policy-rc.d >/dev/null && $(SUDO) chmod +x /usr/sbin/policy-rc.d && policy=1; fi; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	  status=$$?; [ -n "$$policy" ] && $(SUDO) rm -f /usr/sbin/policy-rc.d; \
	  [ $$status -eq 0 ] || exit $$status; \
	fi
endef

deps: llhttp

core-packages:
	$(call ensure_packages,$(CORE_PACKAGES))

test-deps: deps
	$(call ensure_packages,$(TEST_PACKAGES))
	@$(MAKE) --no-print-directory interop-deps

# What the interop matrix runs (Tests/Interop/launch.py): the servers, uvicorn in a venv of the
# build, and the Go server. A piece that cannot be had (no PyPI here) leaves its row "missing" in
# the matrix, which the test run prints; it does not stop the run.
interop-deps:
	$(call ensure_packages,$(INTEROP_PACKAGES))
	@venv=.build/interop-venv; \
	if ! $$venv/bin/python -c 'import uvicorn, starlette' 2>/dev/null; then \
	  python3 -m venv $$venv && $$venv/bin/pip install -q $(INTEROP_PYPI) \
	    || echo "courier: uvicorn/starlette not installed (no PyPI?): the interop matrix will say so"; \
	fi
	@out=$(CURDIR)/.build/interop-go-server; \
	if [ ! -x $$out ] || [ -n "$$(find Tests/Interop/goserver -newer $$out -type f)" ]; then \
	  mkdir -p .build/go && cd Tests/Interop/goserver && \
	  GOCACHE=$(CURDIR)/.build/go/cache GOPATH=$(CURDIR)/.build/go/path GOFLAGS=-mod=mod GOTOOLCHAIN=local \
	    go build -o $$out . || echo "courier: the Go interop server did not build: the matrix will say so"; \
	fi

demo-deps: deps
	$(call ensure_packages,$(DEMO_PACKAGES))

bench-deps: deps
	$(call ensure_packages,$(BENCH_PACKAGES))
	@# aiohttp, httpx and requests for the Python rows (PyPI, into a venv of the bench's own).
	@venv=.build/pybench-venv; \
	if ! $$venv/bin/python -c 'import aiohttp, httpx, requests' 2>/dev/null; then \
	  python3 -m venv $$venv && $$venv/bin/pip install -q aiohttp httpx requests \
	    || echo "courier: aiohttp/httpx/requests not installed (no PyPI?): the Python bench leaves them out"; \
	fi

# llhttp: use the system's (pkg-config `libllhttp`, e.g. Debian 13's libllhttp-dev) when it has one;
# otherwise compile the C sources Debian ships in node-llhttp into a static, position-independent
# library under $(LLHTTP_PREFIX) with a matching libllhttp.pc, so Package.swift is the same everywhere.
# LLHTTP_STRICT_MODE: llhttp 8 is lenient by default (spaces in header names, a missing CRLF after a
# chunk), which is how request-smuggling gaps open; llhttp 9 is strict without the flag.
llhttp: core-packages
	@if pkg-config --exists libllhttp; then exit 0; fi; \
	set -e; \
	if [ ! -f /usr/share/llhttp/llhttp.c ]; then \
	  echo "courier: installing node-llhttp (llhttp's C sources)"; \
	  $(SUDO) apt-get update -qq; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends node-llhttp >/dev/null; \
	fi; \
	work=$$(mktemp -d); \
	for f in api http llhttp; do \
	  cc -O3 -fPIC -DLLHTTP_STRICT_MODE=1 -I/usr/share/include/llhttp -c /usr/share/llhttp/$$f.c -o $$work/$$f.o; \
	done; \
	ar rcs $$work/libllhttp.a $$work/api.o $$work/http.o $$work/llhttp.o; \
	version=$$(awk '/define LLHTTP_VERSION_(MAJOR|MINOR|PATCH)/ {printf "%s%s", sep, $$3; sep="."}' /usr/share/include/llhttp/llhttp.h); \
	printf 'prefix=%s\nlibdir=$${prefix}/lib\nincludedir=$${prefix}/include\n\nName: libllhttp\nDescription: llhttp in strict mode (built by Courier from Debian node-llhttp sources)\nVersion: %s\nLibs: -L$${libdir} -lllhttp\nCflags: -I$${includedir}\n' \
	  "$(LLHTTP_PREFIX)" "$$version" > $$work/libllhttp.pc; \
	$(SUDO) install -d $(LLHTTP_PREFIX)/lib/pkgconfig $(LLHTTP_PREFIX)/include; \
	$(SUDO) install -m 644 $$work/libllhttp.a $(LLHTTP_PREFIX)/lib/; \
	$(SUDO) install -m 644 /usr/share/include/llhttp/llhttp.h $(LLHTTP_PREFIX)/include/; \
	$(SUDO) install -m 644 $$work/libllhttp.pc $(LLHTTP_PREFIX)/lib/pkgconfig/; \
	rm -rf $$work; \
	echo "courier: llhttp $$version installed under $(LLHTTP_PREFIX)"

build: deps
	$(SWIFT) build

# One debug build for everything the tests run (unit tests, integration tests, the CLI).
# Tests/run-tests.sh gives the run a deadline and names any test that hangs.
test: test-deps
	$(SWIFT) build --build-tests
	@# --build-tests does not always relink the C library's product after a change to the C ABI.
	$(SWIFT) build --product CourierC
	@# The public Swift API against its checked-in listing (make api records a deliberate change).
	@python3 Tests/API/api.py check
	@$(MAKE) --no-print-directory python-speedups
	@Tests/run-tests.sh

# Records the public Swift API in Tests/API/Courier.api after a deliberate change.
api: deps
	$(SWIFT) build
	@python3 Tests/API/api.py update

# The library's programs built with AddressSanitizer (and LeakSanitizer) or ThreadSanitizer and
# driven against local servers: the CLI, the benchmark driver (Swift API and C ABI) and the C
# examples (Tests/Sanitizers/run.py says why not the test runner). Any report fails the target.
SANITIZED_PRODUCTS := CourierC courier courier-bench courier-bulk
test-asan: test-deps
	@for product in $(SANITIZED_PRODUCTS); do $(SWIFT) build --sanitize=address --scratch-path .build/asan --product $$product || exit 1; done
	python3 Tests/Sanitizers/run.py address .build/asan/debug

test-tsan: test-deps
	@for product in $(SANITIZED_PRODUCTS); do $(SWIFT) build --sanitize=thread --scratch-path .build/tsan --product $$product || exit 1; done
	python3 Tests/Sanitizers/run.py thread .build/tsan/debug

demo: demo-deps
	@$(MAKE) --no-print-directory python-speedups
	$(SWIFT) build -c release --product courier
	$(SWIFT) build -c release --product courier-demo
	$(SWIFT) build -c release --product CourierC
	@benchmarks/demo.sh .build/release

# Courier beside libcurl, wrk and URLSession; writes benchmarks/RESULTS.md and results.png.
# BENCH_QUICK=1 for a short smoke run, BENCH_REPEAT=n for more repetitions (default 3).
bench: bench-deps
	$(SWIFT) build -c release --product courier-bench
	$(SWIFT) build -c release --product courier
	mkdir -p benchmarks/out
	cc -O2 -Wall benchmarks/curl_bench.c -lcurl -o benchmarks/out/curl_bench
	cc -O2 -Wall -shared -fPIC benchmarks/alloc_counter.c -o benchmarks/out/alloc_counter.so
	@$(MAKE) --no-print-directory python-speedups
	$(SWIFT)c -O benchmarks/urlsession_bench.swift -o benchmarks/out/urlsession_bench
	python3 benchmarks/run.py
	python3 benchmarks/h2.py
	python3 benchmarks/python_clients.py
	$(MAKE) --no-print-directory bench-bulk

# 1 GiB up and down through each API beside curl (benchmarks/BULK.md); part of `make bench`.
bench-bulk: bench-deps
	$(SWIFT) build -c release --product courier-bulk
	$(SWIFT) build -c release --product courier
	$(SWIFT) build -c release --product CourierC
	@# Python loads the library as installed (the Swift runtime linked in: what the wheel ships).
	$(SWIFT) build -c release --scratch-path .build/install --product CourierC -Xswiftc -static-stdlib
	python3 benchmarks/bulk.py

# The seed's story on shaped links in network namespaces (root): A, uploads and a view's
# thumbnails on 3G per setup (Courier, Courier unlimited, curl -Z, aiohttp when `make bench-deps`
# put it in the bench's venv); B, offline and back with a crash; C, a flaky link. Writes
# benchmarks/SCENARIO.md, scenario.png and scenario-c.png.
scenario: deps
	$(call ensure_packages,$(SCENARIO_PACKAGES))
	$(SWIFT) build -c release --product CourierC
	python3 benchmarks/scenario/run.py

# 10 million keep-alive and 1 million new-connection requests with the client's RSS and
# descriptors sampled every second (benchmarks/SOAK.md, soak.png). SOAK_SCALE=0.1 for a short run.
soak: bench-deps
	$(SWIFT) build -c release --product courier-bench
	python3 benchmarks/soak.py

# libFuzzer over every target of Sources/CourierFuzzing, starting from its corpus in Tests/Fuzz/
# (new inputs go to .build/fuzz/corpus/<target>; a crash is written to .build/fuzz/artifacts/:
# add it to Tests/Fuzz/<target>/ and it becomes a test). FUZZ_TARGETS picks targets. Swift's own
# backtracer is off so that libFuzzer records the crashing input.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= response url chunked headers cachefile cachefields cabi tls resume multipart retryafter cookies proxy outbox codings json certinfo leasedbody
fuzz: deps
	$(SWIFT) build -c release --sanitize=fuzzer -Xswiftc -DFUZZING --scratch-path .build/fuzz --product courier-fuzz
	@for target in $(FUZZ_TARGETS); do \
	  mkdir -p .build/fuzz/corpus/$$target .build/fuzz/artifacts; \
	  echo "courier: fuzzing $$target for $(FUZZ_SECONDS) s"; \
	  SWIFT_BACKTRACE=enable=no COURIER_FUZZ_TARGET=$$target .build/fuzz/release/courier-fuzz -max_total_time=$(FUZZ_SECONDS) \
	    -timeout=10 -print_final_stats=1 -artifact_prefix=.build/fuzz/artifacts/ \
	    .build/fuzz/corpus/$$target Tests/Fuzz/$$target || exit 1; \
	done

# A release build with the Swift runtime linked in (-static-stdlib), so the installed
# library and CLI need nothing from the Swift toolchain at run time; its own scratch path keeps
# it apart from the debug and benchmark builds.
VERSION       := $(shell sed -n 's/.*static let string = "\(.*\)"/\1/p' Sources/Courier/Engine.swift)
ABI           := $(shell sed -n 's/^\#define COURIER_ABI_VERSION \([0-9]*\).*/\1/p' include/courier.h)
INSTALL_BUILD := .build/install/release

install: deps
	$(SWIFT) build -c release --scratch-path .build/install --product CourierC -Xswiftc -static-stdlib
	$(SWIFT) build -c release --scratch-path .build/install --product courier -Xswiftc -static-stdlib
	$(MAKE) --no-print-directory install-files BUILT=$(INSTALL_BUILD) STRIP=1

# Copies what BUILT holds (libCourierC.so, courier) under $(DESTDIR)$(PREFIX): header, library
# with its SONAME link and development link, pkg-config file, CLI and its man page. The tests use it on the debug
# build to check the layout and that a C program builds with `pkg-config courier`.
install-files:
	@test -f $(BUILT)/libCourierC.so || { echo "install-files: no $(BUILT)/libCourierC.so (run make install)"; exit 1; }
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 include/courier.h $(DESTDIR)$(PREFIX)/include/courier.h
	install -m 755 $(if $(STRIP),-s,) $(BUILT)/libCourierC.so $(DESTDIR)$(PREFIX)/lib/libcourier.so.$(VERSION)
	ln -sfn libcourier.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libcourier.so.$(ABI)
	ln -sfn libcourier.so.$(ABI) $(DESTDIR)$(PREFIX)/lib/libcourier.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' cbindings/courier.pc.in > $(DESTDIR)$(PREFIX)/lib/pkgconfig/courier.pc
	if [ -x $(BUILT)/courier ]; then install -m 755 $(if $(STRIP),-s,) $(BUILT)/courier $(DESTDIR)$(PREFIX)/bin/courier; fi
	# courier.1, written by the CLI from the flag table its --help prints.
	if [ -x $(BUILT)/courier ]; then install -d $(DESTDIR)$(PREFIX)/share/man/man1 && \
	  $(BUILT)/courier --man-page > $(DESTDIR)$(PREFIX)/share/man/man1/courier.1; fi
	# The Python package where the system's python3 looks for a prefix's packages (Debian's
	# /usr/local/lib/python3.N/dist-packages for /usr/local): `import courier` works at once.
	install -d $(DESTDIR)$(PYTHON_SITE)/courier
	install -m 644 cbindings/python/courier/*.py cbindings/python/courier/py.typed $(DESTDIR)$(PYTHON_SITE)/courier/
	@$(call speedups_build,/usr/bin/python3,$(DESTDIR)$(PYTHON_SITE)/courier)
	# The loader's cache knows the new library at once in the standard prefixes.
	case "$(DESTDIR):$(PREFIX)" in :/usr|:/usr/local) if [ "$$(id -u)" = 0 ]; then ldconfig; fi;; esac

# The Python package's C extension (cbindings/python/courier/_speedups.c: its asyncio hot path)
# built with the system's compiler for $(1), a Python, into the folder $(2). Without that
# Python's headers it says so, and the package runs on ctypes alone.
define speedups_build
	include=$$($(1) -c 'import sysconfig; print(sysconfig.get_paths()["include"])') && \
	suffix=$$($(1) -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') && \
	sources="$$(ls cbindings/python/courier/_speedups*.c)" && \
	newest=$$(ls -t cbindings/python/courier/_speedups*.[ch] | head -1) && \
	if [ ! -f "$$include/Python.h" ]; then \
	  echo "courier: no Python.h for $(1): the Python package runs without its C extension"; \
	elif [ ! "$(2)/_speedups$$suffix" -nt $$newest ]; then \
	  cc -O2 -Wall -Wextra -shared -fPIC -I"$$include" $$sources -o "$(2)/_speedups$$suffix"; \
	fi
endef

# The C extension beside the package's sources, for PYTHON (python3 by default): the tests, the
# demo and the benchmarks import the package from the tree. (pip and `make python-wheel` build
# their own.)
PYTHON ?= python3
python-speedups:
	@$(call speedups_build,$(PYTHON),cbindings/python/courier)

# Where `make install` puts the Python package: the prefix's dist-packages of the system's python3.
PYTHON_SITE ?= $(PREFIX)/lib/python$(shell /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3)/dist-packages

python-site:
	@echo $(PYTHON_SITE)

# A wheel of the Python package with the library inside (courier/libcourier.so.<ABI>), under dist/.
# PYTHON_WHEEL_LIBRARY: the library to bundle (default: the self-contained `make install` build;
# the tests pass the debug build). Debian's python3 builds it: python3-setuptools and python3-wheel
# are packages, so nothing comes from PyPI.
PYTHON_WHEEL_LIBRARY ?=
python-wheel: deps
	$(call ensure_packages,python3 python3-dev python3-setuptools python3-wheel python3-pip)
	@library="$(PYTHON_WHEEL_LIBRARY)"; \
	if [ -z "$$library" ]; then \
	  $(SWIFT) build -c release --scratch-path .build/install --product CourierC -Xswiftc -static-stdlib || exit 1; \
	  library=$(INSTALL_BUILD)/libCourierC.so; \
	fi; \
	stage=$$(mktemp -d) && cp -r cbindings/python/. $$stage/ && rm -rf $$stage/tests $$stage/build $$stage/*.egg-info $$stage/courier/*.so && \
	install -m 755 $$library $$stage/courier/libcourier.so.$(ABI) && \
	mkdir -p dist && /usr/bin/python3 -m pip wheel --quiet --no-build-isolation --no-deps --no-index -w dist $$stage; \
	status=$$?; rm -rf $$stage; exit $$status

clean:
	rm -rf .build
