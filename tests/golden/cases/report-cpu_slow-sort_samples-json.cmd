$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --sort samples --limit 8 --format json
