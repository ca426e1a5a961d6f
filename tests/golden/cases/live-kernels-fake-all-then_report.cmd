cd "$SCRATCH" && $STRATA kernels -o k.sqlite -- "$FAKE_KERNELS_TARGET" && $STRATA report k.sqlite
