$STRATA export cpu-cpu_hotspot-slow/trace.sqlite --format folded -o "$SCRATCH/no/such/out.folded"
