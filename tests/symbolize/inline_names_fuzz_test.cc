// The DWARF name walk (symbolize/dwarf_names) on damaged debug information:
// references that loop (an entry that is its own abstract origin, chains
// that come back on themselves, a pointer type that points to itself), that
// lead outside the section or to entries of the wrong kind, and random byte
// flips. Every address must still get frames, in bounded time, with bounded
// names; the sanitized build (make test-asan) checks the reads.
#include <fcntl.h>
#include <gelf.h>
#include <gtest/gtest.h>
#include <libelf.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "symbolize/symbolizer.h"
#include "test_util.h"
#include "util/temp_dir.h"

namespace strata::symbolize {
namespace {

using testing::FunctionSymbol;

constexpr uint64_t kBase = 0x555555554000;

// A reference attribute (DW_FORM_ref4, relative to its unit) in .debug_info.
struct Reference {
  uint64_t at = 0;        // offset of the value in .debug_info
  uint64_t unit = 0;      // offset of its compilation unit
  uint64_t die = 0;       // offset of the entry that holds it
  std::string die_tag;    // that entry's tag, "DW_TAG_pointer_type"
  std::string attribute;  // "DW_AT_specification"
};

struct Fixture {
  std::string bytes;
  uint64_t info_offset = 0;  // .debug_info in the file
  uint64_t info_size = 0;
  std::vector<Reference> references;
  std::vector<uint64_t> dies;  // every entry's offset
};

uint32_t read32(const std::string& bytes, uint64_t at) {
  uint32_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof v);
  return v;
}

void write32(std::string& bytes, uint64_t at, uint32_t v) {
  std::memcpy(bytes.data() + at, &v, sizeof v);
}

// .debug_info's place from the section headers; its references from
// readelf's dump, each checked against the bytes (a ref4 holds the target's
// offset from its unit), so that the edits below hit what they mean to.
bool load(Fixture& f) {
  std::ifstream in(STRATA_INLINE_NAMES_FIXTURE, std::ios::binary);
  f.bytes.assign(std::istreambuf_iterator<char>(in), {});
  elf_version(EV_CURRENT);
  int fd = open(STRATA_INLINE_NAMES_FIXTURE, O_RDONLY);
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  size_t shstrndx = 0;
  elf_getshdrstrndx(elf, &shstrndx);
  for (Elf_Scn* scn = nullptr; (scn = elf_nextscn(elf, scn)) != nullptr;) {
    GElf_Shdr sh;
    if (gelf_getshdr(scn, &sh) == nullptr) continue;
    const char* name = elf_strptr(elf, shstrndx, sh.sh_name);
    if (name != nullptr && std::strcmp(name, ".debug_info") == 0 && !(sh.sh_flags & SHF_COMPRESSED)) {
      f.info_offset = sh.sh_offset;
      f.info_size = sh.sh_size;
    }
  }
  elf_end(elf);
  close(fd);
  if (f.info_size == 0) return false;

  FILE* dump = popen(STRATA_READELF " --debug-dump=info '" STRATA_INLINE_NAMES_FIXTURE "'", "r");
  if (dump == nullptr) return false;
  static const std::regex unit_re(R"(Compilation Unit @ offset 0x([0-9a-f]+):)");
  static const std::regex die_re(R"(^\s*<\d+><([0-9a-f]+)>: Abbrev Number: [1-9]\d* \((\w+)\))");
  static const std::regex ref_re(
      R"(^\s*<([0-9a-f]+)>\s+(DW_AT_abstract_origin|DW_AT_specification|DW_AT_type)\s*: <0x([0-9a-f]+)>)");
  char line[4096];
  uint64_t unit = 0;
  uint64_t die = 0;
  std::string tag;
  std::cmatch m;
  while (std::fgets(line, sizeof line, dump) != nullptr) {
    if (std::regex_search(line, m, unit_re)) {
      unit = std::stoull(m[1].str(), nullptr, 16);
    } else if (std::regex_search(line, m, die_re)) {
      die = std::stoull(m[1].str(), nullptr, 16);
      tag = m[2].str();
      f.dies.push_back(die);
    } else if (std::regex_search(line, m, ref_re)) {
      Reference r{std::stoull(m[1].str(), nullptr, 16), unit, die, tag, m[2].str()};
      uint64_t target = std::stoull(m[3].str(), nullptr, 16);
      if (r.at + 4 <= f.info_size && target >= unit &&
          read32(f.bytes, f.info_offset + r.at) == target - unit) {
        f.references.push_back(r);
      }
    }
  }
  pclose(dump);
  return !f.references.empty();
}

class InlineNamesFuzz : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!load(fixture_)) GTEST_SKIP() << "no uncompressed .debug_info with ref4 references";
    for (const FunctionSymbol& s : testing::function_symbols(STRATA_INLINE_NAMES_FIXTURE)) {
      std::string name = demangle(s.name);
      if (s.name == "drive" || name.find("outer::") == 0 || name.find("d1::") == 0)
        ranges_.push_back(s);
    }
    ASSERT_GE(ranges_.size(), 5u);
  }

  // Symbolizes every byte of drive() and of the out-of-line copies in the
  // edited file; returns how many frames were inlined.
  size_t symbolize_all(const std::string& bytes, const std::string& label) {
    std::string path = dir_.file(label);
    std::ofstream(path, std::ios::binary) << bytes;
    AddressSpace space;
    space.pid = 4245;
    space.mappings = testing::mappings_for_file(path, kBase);
    Symbolizer sym;
    size_t inlined = 0;
    for (const FunctionSymbol& s : ranges_) {
      for (uint64_t off = 0; off < s.size; ++off) {
        std::vector<Frame> frames = sym.symbolize(space, kBase + s.value + off, false);
        EXPECT_FALSE(frames.empty());
        for (const Frame& f : frames) {
          EXPECT_FALSE(f.function.empty());
          EXPECT_LT(f.function.size(), 65536u);
          inlined += f.inlined;
        }
      }
    }
    return inlined;
  }

  // A copy with every reference that `pick` chooses pointed where it says.
  std::string rewired(const std::function<std::optional<uint32_t>(size_t, const Reference&)>& pick) {
    std::string bytes = fixture_.bytes;
    for (size_t i = 0; i < fixture_.references.size(); ++i) {
      const Reference& r = fixture_.references[i];
      if (std::optional<uint32_t> to = pick(i, r)) write32(bytes, fixture_.info_offset + r.at, *to);
    }
    return bytes;
  }

  static bool is_function_link(const Reference& r) {
    return r.attribute == "DW_AT_abstract_origin" || r.attribute == "DW_AT_specification";
  }

  Fixture fixture_;
  std::vector<FunctionSymbol> ranges_;
  test_util::TempDir dir_{"strata-inline-names"};
};

TEST_F(InlineNamesFuzz, TheUneditedFileHasInlinedFrames) {
  EXPECT_GT(symbolize_all(fixture_.bytes, "plain"), 0u);
}

TEST_F(InlineNamesFuzz, EntriesThatAreTheirOwnOrigin) {
  symbolize_all(rewired([](size_t, const Reference& r) -> std::optional<uint32_t> {
                  if (!is_function_link(r)) return std::nullopt;
                  return static_cast<uint32_t>(r.die - r.unit);
                }),
                "self");
}

TEST_F(InlineNamesFuzz, ChainsThatComeBackOnThemselves) {
  // Each origin or specification points to the entry holding the next one:
  // one long loop through every function entry of a unit.
  std::vector<size_t> links;
  for (size_t i = 0; i < fixture_.references.size(); ++i) {
    if (is_function_link(fixture_.references[i])) links.push_back(i);
  }
  ASSERT_GT(links.size(), 2u);
  std::map<size_t, uint32_t> to;
  for (size_t k = 0; k < links.size(); ++k) {
    const Reference& here = fixture_.references[links[k]];
    const Reference& next = fixture_.references[links[(k + 1) % links.size()]];
    if (next.unit == here.unit) to[links[k]] = static_cast<uint32_t>(next.die - here.unit);
  }
  symbolize_all(rewired([&](size_t i, const Reference&) -> std::optional<uint32_t> {
                  auto it = to.find(i);
                  if (it == to.end()) return std::nullopt;
                  return it->second;
                }),
                "ring");
}

TEST_F(InlineNamesFuzz, TypesThatContainThemselves) {
  symbolize_all(rewired([](size_t, const Reference& r) -> std::optional<uint32_t> {
                  if (r.attribute != "DW_AT_type" || r.die_tag == "DW_TAG_formal_parameter")
                    return std::nullopt;
                  return static_cast<uint32_t>(r.die - r.unit);
                }),
                "typeloop");
}

TEST_F(InlineNamesFuzz, ReferencesOutsideTheSectionOrIntoTheHeader) {
  symbolize_all(rewired([](size_t i, const Reference&) -> std::optional<uint32_t> {
                  return i % 2 ? 0xfffffff0u : 1u;
                }),
                "outside");
}

TEST_F(InlineNamesFuzz, RandomEditsAndFlips) {
  std::mt19937_64 rng(20261204);
  for (int round = 0; round < 25; ++round) {
    std::string bytes = fixture_.bytes;
    int edits = 1 + static_cast<int>(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      const Reference& r = fixture_.references[rng() % fixture_.references.size()];
      uint64_t die = fixture_.dies[rng() % fixture_.dies.size()];
      uint32_t to = rng() % 3 == 0   ? static_cast<uint32_t>(rng())
                    : die >= r.unit ? static_cast<uint32_t>(die - r.unit)
                                    : static_cast<uint32_t>(r.die - r.unit);
      write32(bytes, fixture_.info_offset + r.at, to);
    }
    int flips = static_cast<int>(rng() % 8);
    for (int i = 0; i < flips; ++i) {
      bytes[fixture_.info_offset + rng() % fixture_.info_size] = static_cast<char>(rng());
    }
    symbolize_all(bytes, "random" + std::to_string(round));
  }
}

}  // namespace
}  // namespace strata::symbolize
