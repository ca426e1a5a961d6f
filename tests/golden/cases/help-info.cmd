$STRATA info --help
