cd "$SCRATCH" && $STRATA trace -o t.sqlite -- python3 "$OLDPWD/../import/fake_torch_producer.py" && $STRATA report t.sqlite --report op_sum
