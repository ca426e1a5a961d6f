$STRATA report bench-cpu_hotspot/trace.sqlite --report rank_sum
