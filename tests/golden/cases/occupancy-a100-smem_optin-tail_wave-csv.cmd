$STRATA occupancy --gpu a100 --block-size 16x16 --registers 32 --smem-dynamic 64K --grid 1000 --achieved-occupancy 40 --format csv
