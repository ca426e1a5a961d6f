$STRATA info bad-files/foreign.sqlite
