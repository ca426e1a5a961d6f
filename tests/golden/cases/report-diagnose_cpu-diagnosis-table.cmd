$STRATA report diagnose-cpu_hotspot-slow/trace.sqlite --report diagnosis
