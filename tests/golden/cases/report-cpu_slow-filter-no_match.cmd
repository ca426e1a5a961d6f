$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --filter 'no_such_function_xyz'
