$STRATA diagnose --budget=-1 -o "$SCRATCH/d.sqlite" -- true
