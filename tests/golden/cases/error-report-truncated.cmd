$STRATA report bad-files/truncated.sqlite
