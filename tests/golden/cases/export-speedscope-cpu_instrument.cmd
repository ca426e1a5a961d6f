$STRATA export cpu-cpu_hotspot-instrument/trace.sqlite --format speedscope -o -
