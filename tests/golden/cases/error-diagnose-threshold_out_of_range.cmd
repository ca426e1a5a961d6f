$STRATA diagnose --threshold min_share=2 -o "$SCRATCH/d.sqlite" -- true
