// A small PIE program with a known call chain, built -O2 -g without frame
// pointers; the tests strip it, split its debug info and symbolize addresses
// in it offline.
#include <cstdio>
#include <cstdlib>

extern "C" __attribute__((noipa)) int prog_c(int x) {
  return x * 7 + std::rand() % 3;  // MARK:prog_c
}

extern "C" __attribute__((noipa)) int prog_b(int x) {
  return prog_c(x + 1) + 1;
}

extern "C" __attribute__((noipa)) int prog_a(int x) {
  return prog_b(x * 2) + 2;
}

int main(int argc, char**) {
  std::printf("%d\n", prog_a(argc));
  return 0;
}
