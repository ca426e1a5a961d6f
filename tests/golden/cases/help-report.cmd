$STRATA report --help
