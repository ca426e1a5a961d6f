$STRATA report cpu-cpu_hotspot-slow/trace.sqlite --sort file,line --limit 8
