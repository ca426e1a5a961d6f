cd "$SCRATCH" && $STRATA kernels -o k.sqlite --launch-count 1 -- "$FAKE_KERNELS_TARGET" --exit 3
