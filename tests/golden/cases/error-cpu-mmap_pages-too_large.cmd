$STRATA cpu -m 2G -o "$SCRATCH/t.sqlite" -- /bin/true
