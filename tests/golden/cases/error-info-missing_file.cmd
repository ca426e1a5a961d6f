$STRATA info no-such-dir/no-such-trace.sqlite
