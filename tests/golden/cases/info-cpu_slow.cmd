$STRATA info cpu-cpu_hotspot-slow/trace.sqlite
