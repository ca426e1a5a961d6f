ln -s victim "$SCRATCH/out.folded"; $STRATA export cpu-cpu_hotspot-slow/trace.sqlite --format folded -o "$SCRATCH/out.folded"; status=$?; ls -A "$SCRATCH"; exit $status
