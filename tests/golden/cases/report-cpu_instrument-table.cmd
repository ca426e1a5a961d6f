$STRATA report cpu-cpu_hotspot-instrument/trace.sqlite --format table
