$STRATA report bad-files/foreign.sqlite
