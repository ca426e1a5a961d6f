$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --sort ncalls --limit 5 --format csv
