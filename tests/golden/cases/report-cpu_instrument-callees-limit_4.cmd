$STRATA report cpu-cpu_hotspot-instrument/trace.sqlite --sort time --callees --limit 4
