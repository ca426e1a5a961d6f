#include "cli/torch_hook.h"

#include <cstdlib>
#include <filesystem>

#include "format/torch_payloads.h"

namespace strata::cli {

namespace fs = std::filesystem;

namespace {

constexpr char kHookDirName[] = "strata_torch_hook";

bool complete(const fs::path& lib_dir) {
  std::error_code ec;
  return fs::exists(lib_dir / "libstrata_torch.so", ec) &&
         fs::exists(lib_dir / kHookDirName / "sitecustomize.py", ec);
}

TorchHook hook_in(const fs::path& lib_dir) {
  std::error_code ec;
  fs::path dir = fs::weakly_canonical(lib_dir, ec);
  if (ec) dir = lib_dir;
  return TorchHook{(dir / "libstrata_torch.so").string(), (dir / kHookDirName).string()};
}

}  // namespace

Result<TorchHook> find_torch_hook() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && complete(exe.parent_path() / ".." / "lib")) return hook_in(exe.parent_path() / ".." / "lib");
#ifdef STRATA_TORCH_BUILD_PATH
  fs::path built = fs::path(STRATA_TORCH_BUILD_PATH).parent_path();
  if (complete(built)) return hook_in(built);
#endif
  return make_error(
      "cannot find libstrata_torch.so and strata_torch_hook/ (looked in ../lib beside the strata "
      "executable and in the build tree)");
}

void set_torch_env(const TorchHook& hook, const std::string& run_dir, const TorchHookOptions& options) {
  setenv(format::kTorchDirEnv, run_dir.c_str(), 1);
  setenv(format::kTorchLibEnv, hook.lib.c_str(), 1);
  const char* old = std::getenv("PYTHONPATH");
  std::string path = hook.hook_dir;
  if (old != nullptr && *old != '\0') path += std::string(":") + old;
  setenv("PYTHONPATH", path.c_str(), 1);
  if (options.record_shapes) {
    setenv(format::kTorchShapesEnv, "1", 1);
  } else {
    unsetenv(format::kTorchShapesEnv);
  }
  if (options.stack_frames > 0) {
    setenv(format::kTorchStackEnv, std::to_string(options.stack_frames).c_str(), 1);
  } else {
    unsetenv(format::kTorchStackEnv);
  }
}

void clear_torch_env() {
  for (const char* name : {format::kTorchDirEnv, format::kTorchLibEnv, format::kTorchShapesEnv,
                           format::kTorchStackEnv}) {
    unsetenv(name);
  }
}

}  // namespace strata::cli
