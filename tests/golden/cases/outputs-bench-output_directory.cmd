$STRATA bench -o "$SCRATCH" --force -- sh -c 'echo ran'
