#include "import/spool_files.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

namespace strata::import {

std::vector<std::string> list_spools(const std::string& dir, std::string_view prefix) {
  constexpr std::string_view kSuffix = ".bin";
  std::vector<std::string> files;
  std::error_code ec;
  // symlink_status: the run directory is the target's to write in, and a
  // link planted there must not make strata read a file the link names.
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > prefix.size() + kSuffix.size() && name.starts_with(prefix) &&
        name.ends_with(kSuffix) && std::filesystem::is_regular_file(entry.symlink_status(ec))) {
      files.push_back(entry.path().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace strata::import
