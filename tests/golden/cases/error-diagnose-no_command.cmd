$STRATA diagnose -o "$SCRATCH/d.sqlite"
