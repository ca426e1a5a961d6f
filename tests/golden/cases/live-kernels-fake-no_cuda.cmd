cd "$SCRATCH" && $STRATA kernels -o k.sqlite -- "$FAKE_KERNELS_TARGET" --no-cuda
