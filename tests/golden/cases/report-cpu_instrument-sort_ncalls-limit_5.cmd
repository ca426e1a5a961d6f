$STRATA report cpu-cpu_hotspot-instrument/trace.sqlite --sort ncalls --limit 5
