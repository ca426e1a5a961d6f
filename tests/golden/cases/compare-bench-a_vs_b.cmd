$STRATA compare bench-cpu_hotspot/trace.sqlite
