$STRATA occupancy --gpu h200 --block-size 256 --registers 64 --grid 100 --format json
