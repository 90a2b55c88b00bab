# Goblin Core: the two commands of the README, and a few more for developers.
#   make run            install missing packages, build Release, start the server on its defaults
#   make test           install missing packages (incl. test tools), build, run every test
#                       (native platform layer and the generic POSIX one)
#   make test-sanitize  the whole suite under ASan + UBSan
#   make fuzz           build the libFuzzer harnesses (clang) and run each briefly (docs/fuzzing.md)
#   make bench          build the benchmarks (see docs/benchmarks.md for how to run them)
#   make package        per-OS tarball: server, client library, headers, SBE schema
JOBS ?= $(shell (nproc || sysctl -n hw.ncpu || echo 2) 2>/dev/null)
CTEST_FLAGS ?= --output-on-failure
UNAME := $(shell uname -s)
NATIVE_PLATFORM := $(if $(filter Darwin,$(UNAME)),darwin,$(if $(filter Linux,$(UNAME)),linux,posix))

.PHONY: run build deps test-deps test test-native test-posix test-sanitize fuzz bench package clean

deps:
	@cmake/install-deps.sh

test-deps:
	@cmake/install-deps.sh --test

build: deps
	cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DGOBLIN_BUILD_TESTS=OFF
	cmake --build build-release -j $(JOBS)

run: build
	./build-release/goblin-core

test: test-deps test-native test-posix

test-native:
	cmake -S . -B build-test -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOBLIN_WERROR=ON -DGOBLIN_PLATFORM=$(NATIVE_PLATFORM)
	cmake --build build-test -j $(JOBS)
	ctest --test-dir build-test $(CTEST_FLAGS) -j $(JOBS)

test-posix:
	cmake -S . -B build-test-posix -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGOBLIN_WERROR=ON -DGOBLIN_PLATFORM=posix
	cmake --build build-test-posix -j $(JOBS)
	ctest --test-dir build-test-posix $(CTEST_FLAGS) -j $(JOBS)

test-sanitize: test-deps
	cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DGOBLIN_WERROR=ON -DGOBLIN_SANITIZE=address,undefined
	cmake --build build-asan -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir build-asan $(CTEST_FLAGS) -j $(JOBS) -LE nosanitize

fuzz: test-deps
	cmake/run-fuzzers.sh

bench: deps
	cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DGOBLIN_BUILD_TESTS=OFF
	cmake --build build-release -j $(JOBS)

package: deps
	cmake -S . -B build-package -DCMAKE_BUILD_TYPE=Release -DGOBLIN_BUILD_TESTS=OFF
	cmake --build build-package -j $(JOBS)
	cd build-package && cpack

clean:
	rm -rf build-release build-test build-test-posix build-asan build-fuzz build-package
