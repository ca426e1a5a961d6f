# The front door. `make demo` and `make test` install missing Debian packages
# (scripts/install-deps), configure, build, then run. Everything builds in
# $(BUILD); nothing is installed outside it.
BUILD ?= build
JOBS  ?= $(shell nproc)
CMAKE_FLAGS ?=
STRATA := $(BUILD)/bin/strata

.PHONY: all deps configure build test test-gpu demo bench format clean

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
bench: build
	@scripts/run-benchmarks $(BUILD)

format:
	@clang-format -i $$(git ls-files '*.cc' '*.h' '*.cpp' '*.cu')

clean:
	rm -rf $(BUILD)
