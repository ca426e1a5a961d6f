$STRATA export cpu-cpu_hotspot-slow/trace.sqlite --format folded -o ''
