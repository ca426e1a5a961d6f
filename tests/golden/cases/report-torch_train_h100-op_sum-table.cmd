$STRATA report trace-torch_train-h100/trace.sqlite --report op_sum --format table
