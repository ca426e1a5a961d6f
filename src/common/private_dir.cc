#include "common/private_dir.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace strata {

std::string temp_parent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

Result<std::string> make_private_dir(std::string_view prefix, const std::string& parent) {
  std::string pattern = (parent.empty() ? temp_parent() : parent) + "/";
  pattern.append(prefix);
  pattern += "-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) return make_error(std::strerror(errno));
  return pattern;
}

Result<PrivateDir> PrivateDir::make(std::string_view prefix, const std::string& parent) {
  STRATA_ASSIGN_OR_RETURN(std::string path, make_private_dir(prefix, parent));
  return PrivateDir(std::move(path));
}

PrivateDir::~PrivateDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace strata
