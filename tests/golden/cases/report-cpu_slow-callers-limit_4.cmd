$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --sort cumulative --callers --limit 4
