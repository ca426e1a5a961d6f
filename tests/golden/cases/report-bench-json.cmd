$STRATA report bench-cpu_hotspot/trace.sqlite --format json
