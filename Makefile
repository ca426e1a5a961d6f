# The front door. `make demo` and `make test` install missing Debian packages
# (scripts/install-deps), configure, build, then run. Everything builds in
# $(BUILD); nothing is installed outside it.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=
STRATA := $(BUILD)/bin/strata

.PHONY: all deps configure build test test-gpu test-asan test-faults fuzz demo tutorial bench format clean

all: build

deps:
	@scripts/install-deps

configure: deps
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j$(JOBS)

# The whole suite; GPU tests (label gpu) report SKIPPED where no CUDA device exists.
test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j$(JOBS)

# The CPU suite again, built in $(ASAN_BUILD) with AddressSanitizer and
# UndefinedBehaviorSanitizer (-DSTRATA_SANITIZE=ON): the first finding ends
# the process that met it (halt_on_error, -fno-sanitize-recover=all), so it
# fails its test. What runs differently, and why:
#  - verify_asan_link_order=0: strata preloads its in-process libraries
#    (libstrata_sigprof.so, the agent) with LD_PRELOAD, which puts them ahead
#    of libasan (a sanitized target's, or the library's own in an
#    unsanitized one): ASan's start-up check refuses both ("ASan runtime does
#    not come first in initial library list"); with it off, both run.
#  - label gpu: needs a CUDA device (SKIPPED without one, as in `make test`).
#  - label no-asan: a test that cannot run sanitized; each says why where
#    it sets the label (tests/agent/torch/CMakeLists.txt: two of the PyTorch
#    checks, which load the sanitized library into Debian's unsanitized
#    python3).
# LeakSanitizer stays on (detect_leaks=1): a leak is a finding too.
ASAN_BUILD ?= build-asan
ASAN_ENV := ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:verify_asan_link_order=0:detect_leaks=1 \
            UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
test-asan: deps
	@cmake -S . -B $(ASAN_BUILD) -DSTRATA_SANITIZE=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j$(JOBS)
	@$(ASAN_ENV) ctest --test-dir $(ASAN_BUILD) --output-on-failure -j$(JOBS) -LE 'gpu|no-asan'

# libFuzzer on the readers of untrusted bytes (fuzz/README.md): builds the
# fuzzers with clang-14, ASan and UBSan in $(FUZZ_BUILD), runs each for
# FUZZ_SECONDS over fuzz/corpus/NAME and fuzz/regressions/NAME. New inputs go
# to $(FUZZ_BUILD)/fuzz/new/NAME, crashes to $(FUZZ_BUILD)/fuzz/crashes/NAME;
# FUZZ_MERGE=1 merges the new inputs that add coverage into fuzz/corpus/NAME.
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 60
FUZZ_MERGE ?= 0
FUZZERS ?= spool perf_records perf_map trace
fuzz: deps
	@CC=clang-14 CXX=clang++-14 cmake -S . -B $(FUZZ_BUILD) -DSTRATA_SANITIZE=ON -DSTRATA_FUZZ=ON \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(FUZZ_BUILD) -j$(JOBS) --target $(FUZZERS:%=%_fuzzer)
	@FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_MERGE=$(FUZZ_MERGE) fuzz/run-fuzzers $(FUZZ_BUILD) $(FUZZERS)

# The fault-injection suite (tests/faults/README.md): label faults (no root;
# also part of `make test`) and faults-root, which mounts a 1 MiB tmpfs and
# reports SKIPPED without root or where the mount is refused.
test-faults: build
	@ctest --test-dir $(BUILD) --output-on-failure -L '^faults(-root)?$$'

# Only the GPU-labelled tests (on the GPU machine).
test-gpu: build
	@ctest --test-dir $(BUILD) --output-on-failure -L gpu

# The workflow on the bundled example: the baseline (cpu_hotspot slow vs
# fast), then the CPU profile of slow mode, which names the hotspot; on a
# machine with a CUDA device also the GPU timeline of gpu_matmul's slow mode
# and the Launch Statistics and Occupancy of its first GEMM (the tiny grid).
demo: build
	@mkdir -p $(BUILD)/demo
	$(STRATA) bench -n 5 --warmup 1 -q --metric elapsed_ms --force -o $(BUILD)/demo/bench.sqlite \
	  --vs '$(BUILD)/bin/cpu_hotspot --mode fast --lines 6000' \
	  -- $(BUILD)/bin/cpu_hotspot --mode slow --lines 6000
	@echo
	$(STRATA) cpu --limit 10 --force -o $(BUILD)/demo/cpu.sqlite \
	  -- $(BUILD)/bin/cpu_hotspot --mode slow --lines 6000
	@# With a GPU: the GPU timeline of the tutorial's Case 2 (128 tiny GEMMs, a sync after each).
	@if [ -x $(BUILD)/bin/gpu_matmul ] && nvidia-smi -L >/dev/null 2>&1; then echo; \
	  echo "$(STRATA) trace -- $(BUILD)/bin/gpu_matmul --mode slow_loop_sync --repeats 128 --tile-size 128"; \
	  $(STRATA) trace --force -o $(BUILD)/demo/trace.sqlite \
	    -- $(BUILD)/bin/gpu_matmul --mode slow_loop_sync --repeats 128 --tile-size 128; \
	  echo; echo "$(STRATA) kernels --kernel-name regex:gemm --launch-count 1 --section launch,occupancy -- $(BUILD)/bin/gpu_matmul --mode slow_loop_sync"; \
	  $(STRATA) kernels --kernel-name regex:gemm --launch-count 1 --section launch,occupancy --force \
	    -o $(BUILD)/demo/kernels.sqlite -- $(BUILD)/bin/gpu_matmul --mode slow_loop_sync; \
	else echo; echo "(no CUDA device here: the GPU part of the demo, strata trace and strata kernels on gpu_matmul, is skipped)"; fi

# Benchmarks (bench/); figures go to docs/PERFORMANCE.md.
# docs/tutorial.md from docs/tutorial.in.md, by running its commands (scripts/tutorial):
# the CPU case anywhere, the GPU case where a CUDA device is present. TUTORIAL_PYTHON
# is the Python that runs the examples (Python names need 3.12+, or see docs/cli.md).
TUTORIAL_PYTHON ?= python3
tutorial: build
	@scripts/tutorial --build $(BUILD) --python $(TUTORIAL_PYTHON)

bench: build
	@scripts/run-benchmarks $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.cc' '*.h' '*.cpp' '*.cu')

clean:
	rm -rf $(BUILD)
