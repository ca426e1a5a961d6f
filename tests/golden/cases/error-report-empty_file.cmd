$STRATA report bad-files/empty.sqlite
