COLUMNS=80 $STRATA report cpu-cpu_hotspot-slow/trace.sqlite --sort cum --limit 8
