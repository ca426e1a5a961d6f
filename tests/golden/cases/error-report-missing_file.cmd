$STRATA report no-such-dir/no-such-trace.sqlite
