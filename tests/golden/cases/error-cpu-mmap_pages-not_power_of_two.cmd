$STRATA cpu -m 100 -o "$SCRATCH/t.sqlite" -- /bin/true
