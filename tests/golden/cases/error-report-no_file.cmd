$STRATA report
