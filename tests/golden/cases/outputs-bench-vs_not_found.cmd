$STRATA bench -o "$SCRATCH/t.sqlite" --vs 'no-such-command-strata --flag' -- sh -c 'echo ran'; status=$?; ls -A "$SCRATCH"; exit $status
