$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --report cuda_api_sum
