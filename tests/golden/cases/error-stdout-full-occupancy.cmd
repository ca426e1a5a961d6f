$STRATA occupancy --gpu h200 --block-size 256 --registers 32 > /dev/full
