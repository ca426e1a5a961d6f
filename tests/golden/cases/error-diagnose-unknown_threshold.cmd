$STRATA diagnose --threshold min_shar=0.2 -o "$SCRATCH/d.sqlite" -- true
