$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --sort c
