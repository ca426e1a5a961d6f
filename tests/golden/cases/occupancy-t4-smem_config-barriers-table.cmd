$STRATA occupancy --gpu t4 --block-size 128 --registers 64 --smem-config 32K --barriers 2 --grid 40,2 --achieved-warps 20
