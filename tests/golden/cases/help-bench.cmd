$STRATA bench --help
