$STRATA compare cpu-cpu_hotspot-slow/trace.sqlite
