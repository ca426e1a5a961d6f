cd "$SCRATCH" && $STRATA kernels -o k.sqlite --kernel-name regex:gemm --launch-skip 2 --section sol --cache-control none -- "$FAKE_KERNELS_TARGET" > /dev/null && cat agent-env.txt
