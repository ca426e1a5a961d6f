$STRATA occupancy --gpu z9000 --block-size 1 --registers 1
