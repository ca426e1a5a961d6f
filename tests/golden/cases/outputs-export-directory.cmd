$STRATA export cpu-cpu_hotspot-slow/trace.sqlite --format folded --force -o "$SCRATCH"
