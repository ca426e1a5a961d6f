$STRATA compare bench-cpu_hotspot/trace.sqlite bench-cpu_hotspot/trace.sqlite --gate 5
