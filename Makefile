# Thin front end over CMake. The two commands of the README:
#   make demo    the two-task demo on the default backend
#   make check   build everything and run every test
# Both install the Debian packages they need when run as root.

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
BUILD_FUZZ ?= build-fuzz
BUILD_PKG  ?= build-pkg
PREFIX     ?=
FUZZ_SECONDS ?= 30
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_ARGS ?=

.PHONY: all deps build check check-sanitize check-tsan fuzz demo install package clean help

all: build

help:
	@echo "make demo            run the two-task demo (service + batch) and print its table"
	@echo "make check           build everything and run every test"
	@echo "make check-sanitize  unit and integration tests under AddressSanitizer + UndefinedBehaviorSanitizer"
	@echo "make check-tsan      fikitd and libfikit.so under ThreadSanitizer, many threads launching"
	@echo "make fuzz            run every libFuzzer target for FUZZ_SECONDS (default 30) each"
	@echo "make build           configure and build into $(BUILD)/"
	@echo "make install         install (PREFIX=/usr/local by default: make install PREFIX=/opt/fikit)"
	@echo "make package         a .deb of fikit, installed under /usr, in $(BUILD_PKG)/"
	@echo "make deps            install the Debian packages fikit needs (as root)"

deps:
	@scripts/install-deps

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

check: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

check-sanitize: deps
	cmake -S . -B $(BUILD_ASAN) -DFIKIT_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug $(CMAKE_ARGS)
	cmake --build $(BUILD_ASAN) -j $(JOBS)
	ctest --test-dir $(BUILD_ASAN) --output-on-failure -L "unit|integration" -j $(JOBS)

check-tsan: deps
	cmake -S . -B $(BUILD_TSAN) -DFIKIT_SANITIZE=thread -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)
	cmake --build $(BUILD_TSAN) -j $(JOBS)
	# Only the multi-threaded programs: Criterion's own runner cannot start
	# under ThreadSanitizer, and the core it tests is single-threaded.
	ctest --test-dir $(BUILD_TSAN) --output-on-failure -L threads -j $(JOBS)

fuzz: deps
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DFIKIT_FUZZ=ON -DFIKIT_SANITIZE=address,undefined \
	  -DFIKIT_BUILD_TESTS=OFF -DFIKIT_WITH_CUDA=OFF -DFIKIT_WITH_HIP=OFF -DFIKIT_WITH_OPENCL=OFF \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_config fuzz_profile fuzz_proto fuzz_replay
	scripts/run-fuzz $(BUILD_FUZZ) $(FUZZ_SECONDS)

# Only what the demo runs (make build builds everything, the tests included).
demo: deps $(BUILD)/CMakeCache.txt
	@echo "make demo: building the demo's programs into $(BUILD)/ (fikitd, fikit, fikit-launch, libfikit.so, the demo service and batch job), not the tests"
	cmake --build $(BUILD) -j $(JOBS) --target demo-programs
	demo/run-demo --build $(BUILD)

install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

# A build of its own for /usr, without the tests, and its .deb.
package: deps
	cmake -S . -B $(BUILD_PKG) -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr -DFIKIT_BUILD_TESTS=OFF $(CMAKE_ARGS)
	cmake --build $(BUILD_PKG) -j $(JOBS)
	cd $(BUILD_PKG) && cpack -G DEB
	@if command -v rpmbuild >/dev/null; then cd $(BUILD_PKG) && cpack -G RPM; \
	else echo "make package: no rpmbuild (apt-get install rpm): the .rpm is left out"; fi

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) $(BUILD_FUZZ) $(BUILD_PKG)
