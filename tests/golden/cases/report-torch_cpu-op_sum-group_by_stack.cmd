$STRATA report trace-torch_train-cpu/trace.sqlite --report op_sum --group-by-stack 1 --sort cpu_time_total --limit 6
