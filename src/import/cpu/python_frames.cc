#include "import/cpu/python_frames.h"

#include <fstream>
#include <string_view>

namespace strata::import {
namespace {

// Whether `line` declares `name` with def, async def or class.
bool declares(const std::string& line, const std::string& name) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string::npos) return false;
  std::string_view rest(line.c_str() + i);
  bool found = false;
  for (std::string_view keyword : {"def ", "async def ", "class "}) {
    if (rest.substr(0, keyword.size()) != keyword) continue;
    std::string_view after = rest.substr(keyword.size());
    size_t start = after.find_first_not_of(' ');
    if (start == std::string_view::npos) continue;
    after.remove_prefix(start);
    if (after.substr(0, name.size()) == name && after.size() > name.size() &&
        (after[name.size()] == '(' || after[name.size()] == ':' || after[name.size()] == ' ')) {
      found = true;
    }
  }
  return found;
}

}  // namespace

bool split_python_name(const std::string& name, std::string* function, std::string* file) {
  if (name.rfind("py::", 0) != 0) return false;
  size_t colon = name.find(':', 4);
  if (colon == std::string::npos) {
    *function = name.substr(4);
    file->clear();
  } else {
    *function = name.substr(4, colon - 4);
    *file = name.substr(colon + 1);
  }
  return true;
}

int PythonSources::def_line(const std::string& file, const std::string& qualname) {
  auto key = std::make_pair(file, qualname);
  auto it = cache_.find(key);
  if (it != cache_.end()) return it->second;
  if (qualname == "<module>") return cache_[key] = 1;  // cProfile's co_firstlineno of a module
  std::string name = qualname.substr(qualname.rfind('.') + 1);
  int found = 0;
  std::ifstream in(file);
  std::string line;
  for (int number = 1; found == 0 && std::getline(in, line); ++number) {
    if (declares(line, name)) found = number;
  }
  return cache_[key] = found;
}

const symbolize::PythonMethods& PythonBuiltinNames::methods(const std::string& module) {
  auto it = modules_.find(module);
  if (it == modules_.end()) {
    symbolize::PythonMethods read;
    if (auto file = symbolize::ElfFile::open(module)) read = symbolize::read_python_methods(**file);
    it = modules_.emplace(module, std::move(read)).first;
  }
  return it->second;
}

std::string PythonBuiltinNames::name(const std::string& module, const std::string& symbol) {
  const std::string* found = methods(module).by_symbol(symbol);
  return found ? *found : std::string();
}

std::optional<std::vector<analysis::FrameId>> merge_python_frames(
    const std::vector<analysis::FrameId>& native, const std::vector<bool>& is_eval,
    const std::vector<std::vector<analysis::FrameId>>& groups, bool native_cut) {
  size_t evals = 0;
  for (size_t i = 0; i < native.size() && i < is_eval.size(); ++i) evals += is_eval[i] ? 1 : 0;
  if (evals != groups.size() && !(native_cut && evals < groups.size())) return std::nullopt;
  std::vector<analysis::FrameId> out;
  size_t group = 0;
  for (size_t i = 0; i < native.size(); ++i) {
    out.push_back(native[i]);
    if (i < is_eval.size() && is_eval[i]) {
      const auto& g = groups[group++];
      out.insert(out.end(), g.begin(), g.end());
    }
  }
  for (; group < groups.size(); ++group) {
    out.insert(out.end(), groups[group].begin(), groups[group].end());
  }
  return out;
}

std::string PythonBuiltinNames::name_at(const std::string& module, uint64_t address) {
  const std::string* found = methods(module).by_address(address);
  return found ? *found : std::string();
}

}  // namespace strata::import
