$STRATA bench -n 1 --warmup 0 -q -o "$SCRATCH/b.sqlite" -- true > /dev/full
