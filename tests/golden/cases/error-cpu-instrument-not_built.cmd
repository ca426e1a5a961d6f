$STRATA cpu --instrument -o "$SCRATCH/t.sqlite" -- /bin/true; echo "status $?"; ls "$SCRATCH"
