$STRATA occupancy --gpu h200 --block-size 100 --registers 40 --smem-static 100K --format json
