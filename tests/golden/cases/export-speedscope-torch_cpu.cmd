$STRATA export trace-torch_train-cpu/trace.sqlite --format speedscope -o -
