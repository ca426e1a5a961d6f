cd "$SCRATCH" && $STRATA kernels -o k.sqlite --kernel-name regex:gemm --launch-skip 1 --launch-count 1 -- "$FAKE_KERNELS_TARGET" && $STRATA report k.sqlite --report kernels
