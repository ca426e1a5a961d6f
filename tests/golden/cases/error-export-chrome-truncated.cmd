$STRATA export bad-files/truncated.sqlite --format chrome -o -
