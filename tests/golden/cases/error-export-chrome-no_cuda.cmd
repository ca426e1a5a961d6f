$STRATA export cpu-cpu_hotspot-slow/trace.sqlite --format chrome -o -
