$STRATA bench --vs '' -- sh -c 'echo ran'
