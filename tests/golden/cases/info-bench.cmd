$STRATA info bench-cpu_hotspot/trace.sqlite
