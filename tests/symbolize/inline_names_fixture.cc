// Functions GCC inlines and names without a linkage name (members and free
// functions of an anonymous namespace), each also kept out of line (its
// address is passed to a noipa caller), so the tests can compare the label of
// an inlined frame with the demangled symbol of the out-of-line copy.
// Built -O2 -g; read offline, never run by the tests.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace outer {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed | 1) {}
  uint64_t next() {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
  }
  size_t below(size_t n) const { return static_cast<size_t>(state_ % n); }

 private:
  uint64_t state_;
};

size_t weigh(const std::string& word, unsigned long scale) {
  size_t h = scale;
  for (char c : word) h = h * 31 + static_cast<unsigned char>(c);
  return h;
}

}  // namespace
}  // namespace outer

// Twenty nested namespaces: the rebuilt name carries every one.
#define STRATA_NS(n) namespace n {
#define STRATA_END }
STRATA_NS(d1) STRATA_NS(d2) STRATA_NS(d3) STRATA_NS(d4) STRATA_NS(d5) STRATA_NS(d6) STRATA_NS(d7)
STRATA_NS(d8) STRATA_NS(d9) STRATA_NS(d10) STRATA_NS(d11) STRATA_NS(d12) STRATA_NS(d13)
STRATA_NS(d14) STRATA_NS(d15) STRATA_NS(d16) STRATA_NS(d17) STRATA_NS(d18) STRATA_NS(d19)
namespace {
struct Deep {
  static int twice(int x) {
    int s = 0;
    for (int k = 0; k < x % 7; ++k) s += k * x;
    return s;
  }
};
}  // namespace
STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END
STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END STRATA_END
STRATA_END

using DeepT = d1::d2::d3::d4::d5::d6::d7::d8::d9::d10::d11::d12::d13::d14::d15::d16::d17::d18::d19::Deep;

extern "C" __attribute__((noipa)) uint64_t drive(int rounds, const char* word) {
  outer::Rng rng(static_cast<uint64_t>(rounds));
  std::string w(word);
  uint64_t total = 0;
  for (int i = 0; i < rounds; ++i) {
    total += rng.next() + rng.below(7) + outer::weigh(w, static_cast<unsigned long>(i));
    total += static_cast<uint64_t>(DeepT::twice(i));
  }
  return total;
}

__attribute__((noipa)) uint64_t call_next(outer::Rng& rng, uint64_t (outer::Rng::*f)()) {
  return (rng.*f)();
}
__attribute__((noipa)) size_t call_below(const outer::Rng& rng, size_t (outer::Rng::*f)(size_t) const) {
  return (rng.*f)(5);
}
__attribute__((noipa)) size_t call_weigh(size_t (*f)(const std::string&, unsigned long)) {
  return f("abc", 3);
}
__attribute__((noipa)) int call_twice(int (*f)(int)) { return f(4); }

int main(int argc, char** argv) {
  outer::Rng rng(7);
  uint64_t sum = drive(argc * 1000, argv[0]) + call_next(rng, &outer::Rng::next) +
                 call_below(rng, &outer::Rng::below) + call_weigh(&outer::weigh) +
                 static_cast<uint64_t>(call_twice(&DeepT::twice));
  std::printf("%llu\n", static_cast<unsigned long long>(sum));
  return 0;
}
