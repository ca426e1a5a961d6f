// The environment the agent's config tests give parse_config: a test sets
// g_env, then passes fake_env as the getenv to read it through.
#pragma once

#include <map>
#include <string>

namespace strata::agent::test_env {

inline std::map<std::string, std::string> g_env;  // one for the whole test binary

inline const char* fake_env(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

}  // namespace strata::agent::test_env
