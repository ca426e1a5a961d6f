$STRATA cpu --mmap-pages 6K -o "$SCRATCH/t.sqlite" -- /bin/true
