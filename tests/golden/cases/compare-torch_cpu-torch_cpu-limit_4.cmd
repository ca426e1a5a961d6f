$STRATA compare trace-torch_train-cpu/trace.sqlite trace-torch_train-cpu/trace.sqlite --limit 4
