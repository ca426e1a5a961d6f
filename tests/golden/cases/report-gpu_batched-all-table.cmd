$STRATA report trace-gpu_matmul-batched/trace.sqlite --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,cuda_gpu_mem_size_sum,cuda_kern_exec_sum,nvtx_sum,op_sum
