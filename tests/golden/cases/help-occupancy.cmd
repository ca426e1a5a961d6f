$STRATA occupancy --help
