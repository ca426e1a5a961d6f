$STRATA cpu --help
