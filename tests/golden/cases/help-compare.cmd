$STRATA compare --help
