$STRATA info cpu-cpu_hotspot-instrument/trace.sqlite
