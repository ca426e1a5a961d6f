cd "$SCRATCH" && $STRATA kernels -o k.sqlite --section launch,occupancy -- "$FAKE_KERNELS_TARGET" --gemms 2
