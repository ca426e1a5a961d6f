$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --filter 'cpu_hotspot::' --sort cumtime
