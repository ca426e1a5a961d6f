$STRATA info bad-files/truncated.sqlite
