$STRATA report cpu-cpu_hotspot-instrument/trace.sqlite --sort cumtime --limit 0 --format json
