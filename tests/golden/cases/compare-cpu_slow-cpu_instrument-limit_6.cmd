$STRATA compare cpu-cpu_hotspot-slow/trace.sqlite cpu-cpu_hotspot-instrument/trace.sqlite --limit 6
