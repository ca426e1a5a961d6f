$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --threads --limit 5 --format csv
