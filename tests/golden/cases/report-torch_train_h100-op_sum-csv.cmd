$STRATA report trace-torch_train-h100/trace.sqlite --report op_sum --format csv --sort self_cuda_time_total
