$STRATA export --help
