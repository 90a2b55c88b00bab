# Goblin Core: the two commands of the README, and a few more for developers.
#   make run            install missing packages, build Release, start the server on its defaults
#   make test           install missing packages (incl. test tools), build, run every test
#                       (native platform layer and the generic POSIX one)
#   make test-sanitize  the whole suite under ASan + UBSan (+ LeakSanitizer on Linux)
#   make fuzz           build the libFuzzer harnesses (clang) and run each briefly (docs/fuzzing.md)
#   make bench          build the benchmarks (see docs/benchmarks.md for how to run them)
#   make cluster-local  N pinned processes as one Redis Cluster (N=, REPLICAS=; docs/scale-out.md)
#   make package        per-OS tarball: server, client library, headers, SBE schema
#   make package-aarch64  the same for arm64 Linux, cross-built (Debian/Ubuntu x86-64 host)
#   make checks         the cross checks CI runs next to make test (Debian/Ubuntu; see
#                       docs/platform.md, "What is checked where"): check-clang,
#                       check-darwin, check-aarch64, check-tsan
JOBS ?= $(shell (nproc || sysctl -n hw.ncpu || echo 2) 2>/dev/null)
# Tests run two per core: an integration file spends about half its time
# waiting (for servers to start, replicas to sync, failovers, timeouts), so
# at one per core the cores sit idle. Measured on 2 cores (2026-12-07): the
# native suite used 43% of them at -j2 and took 855 s, 455 s at -j4.
TEST_JOBS ?= $(shell echo $$(( 2 * $(JOBS) )))
CTEST_FLAGS ?= --output-on-failure
UNAME := $(shell uname -s)
NATIVE_PLATFORM := $(if $(filter Darwin,$(UNAME)),darwin,$(if $(filter Linux,$(UNAME)),linux,posix))

# LeakSanitizer exists on Linux only; Apple's AddressSanitizer refuses to
# start with detect_leaks=1.
LEAK_CHECKS := $(if $(filter Linux,$(UNAME)),1,0)

# ctest over a build dir ($(1)), with extra ctest arguments ($(2)) and an
# environment ($(3)), then the totals of the comparisons with redis-server 7.0
# and the other references (test/integration/reference_summary.py): a test
# file that left no counts fails, and under CI so does any skipped comparison.
run_ctest = rm -rf $(1)/reference-counts && { $(3) ctest --test-dir $(1) $(CTEST_FLAGS) --no-tests=error -j $(TEST_JOBS) $(2); \
  rc=$$?; python3 test/integration/reference_summary.py $(1) || rc=1; exit $$rc; }

.PHONY: run build deps test-deps check-deps test test-native test-posix test-sanitize fuzz bench package \
        package-aarch64 checks check-clang check-darwin check-aarch64 check-tsan clean

deps:
	@cmake/install-deps.sh

test-deps:
	@cmake/install-deps.sh --test

check-deps:
	@cmake/install-deps.sh --checks

build: deps
	cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DGOBLIN_BUILD_TESTS=OFF
	cmake --build build-release -j $(JOBS)

run: build
	./build-release/goblin-core

test: test-deps test-native test-posix

test-native:
	cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOBLIN_WERROR=ON -DGOBLIN_PLATFORM=$(NATIVE_PLATFORM)
	cmake --build build-test -j $(JOBS)
	$(call run_ctest,build-test)

test-posix:
	cmake -S . -B build-test-posix -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOBLIN_WERROR=ON -DGOBLIN_PLATFORM=posix
	cmake --build build-test-posix -j $(JOBS)
	$(call run_ctest,build-test-posix)

test-sanitize: test-deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGOBLIN_WERROR=ON -DGOBLIN_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)
	$(call run_ctest,build-asan,-LE nosanitize,ASAN_OPTIONS=detect_leaks=$(LEAK_CHECKS):abort_on_error=1 \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1)

fuzz: test-deps
	cmake/run-fuzzers.sh

bench: deps
	cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DGOBLIN_BUILD_TESTS=OFF
	cmake --build build-release -j $(JOBS)

package: deps
	cmake -S . -B build-package -DCMAKE_BUILD_TYPE=Release -DGOBLIN_BUILD_TESTS=OFF
	cmake --build build-package -j $(JOBS)
	cd build-package && cpack

package-aarch64: check-deps
	cmake -S . -B build-package-aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/linux-aarch64-gnu.cmake \
	  -DCMAKE_BUILD_TYPE=Release -DGOBLIN_BUILD_TESTS=OFF -DGOBLIN_PLATFORM=linux
	cmake --build build-package-aarch64 -j $(JOBS)
	cd build-package-aarch64 && cpack

checks: check-clang check-darwin check-aarch64 check-tsan

# The whole tree with clang and -Werror (clang warns where gcc does not), unit suite run.
check-clang: test-deps
	cmake -S . -B build-clang -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOBLIN_WERROR=ON \
	  -DGOBLIN_PLATFORM=$(NATIVE_PLATFORM)
	cmake --build build-clang -j $(JOBS)
	ctest --test-dir build-clang $(CTEST_FLAGS) -j $(JOBS) -L unit

check-darwin: check-deps
	JOBS=$(JOBS) cmake/check-darwin-compile.sh

check-aarch64: check-deps
	JOBS=$(JOBS) cmake/check-aarch64.sh

check-tsan: test-deps
	JOBS=$(JOBS) cmake/check-tsan.sh

clean:
	rm -rf build-release build-test build-test-posix build-asan build-fuzz build-package build-package-aarch64 \
	  build-clang build-darwin-check build-aarch64 build-tsan

# Many cores on one box (docs/scale-out.md): N primaries (default: one per
# usable CPU), REPLICAS replicas each, one goblin-core process per CPU,
# formed into one Redis Cluster on ports CLUSTER_PORT.. with their files
# under CLUSTER_DIR; `make cluster-local-stop` ends them.
#   make cluster-local N=4 REPLICAS=1
REPLICAS ?= 0
CLUSTER_PORT ?= 7000
CLUSTER_DIR ?= goblin-cluster
.PHONY: cluster-local cluster-local-stop
cluster-local: build
	./build-release/goblin-cluster start --dir $(CLUSTER_DIR) $(if $(N),-n $(N)) --replicas $(REPLICAS) \
	  --port $(CLUSTER_PORT)

cluster-local-stop:
	./build-release/goblin-cluster stop --dir $(CLUSTER_DIR)
