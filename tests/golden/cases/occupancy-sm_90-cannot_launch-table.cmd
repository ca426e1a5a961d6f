$STRATA occupancy --gpu sm_90 --block-size 1024 --registers 255
