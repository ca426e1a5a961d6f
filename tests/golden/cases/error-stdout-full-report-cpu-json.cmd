$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --format json > /dev/full
