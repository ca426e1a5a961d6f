cd "$SCRATCH" && $STRATA kernels -o k.sqlite --kernel-name nosuch -- "$FAKE_KERNELS_TARGET"
