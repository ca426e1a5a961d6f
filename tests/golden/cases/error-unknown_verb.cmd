$STRATA nosuchverb
