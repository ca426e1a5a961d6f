#include "analysis/kernel_class.h"

#include <array>
#include <cctype>
#include <string>
#include <utility>

namespace strata::analysis {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool contains_nocase(std::string_view s, std::string_view word) {
  if (word.size() > s.size()) return false;
  for (size_t i = 0; i + word.size() <= s.size(); ++i) {
    size_t j = 0;
    while (j < word.size() && std::tolower(static_cast<unsigned char>(s[i + j])) ==
                                  static_cast<unsigned char>(word[j])) {
      ++j;
    }
    if (j == word.size()) return true;
  }
  return false;
}

// The bare function name: without a leading "void ", the parameter list, a
// mangled name's _Z<length> prefix.
std::string_view base_name(std::string_view name) {
  if (starts_with(name, "void ")) name.remove_prefix(5);
  if (starts_with(name, "_Z")) {
    name.remove_prefix(2);
    size_t digits = 0;
    size_t length = 0;
    while (digits < name.size() && std::isdigit(static_cast<unsigned char>(name[digits]))) {
      length = length * 10 + static_cast<size_t>(name[digits] - '0');
      ++digits;
    }
    if (digits > 0 && digits + length <= name.size()) return name.substr(digits, length);
    return name;
  }
  size_t paren = name.find('(');
  if (paren != std::string_view::npos) name = name.substr(0, paren);
  return name;
}

// Longest names first, so ReduceScatter is not taken for Reduce.
constexpr std::array<std::pair<std::string_view, Collective>, 10> kCollectives = {{
    {"ReduceScatter", Collective::kReduceScatter},
    {"AllReduce", Collective::kAllReduce},
    {"AllGather", Collective::kAllGather},
    {"Broadcast", Collective::kBroadcast},
    {"SendRecv", Collective::kSendRecv},
    {"AllToAll", Collective::kAllToAll},
    {"AlltoAll", Collective::kAllToAll},
    {"Reduce", Collective::kReduce},
    {"Send", Collective::kSendRecv},
    {"Recv", Collective::kSendRecv},
}};

Collective parse_collective(std::string_view rest) {
  for (const auto& [text, collective] : kCollectives) {
    if (starts_with(rest, text)) return collective;
  }
  return Collective::kOther;
}

}  // namespace

KernelKind classify_kernel(std::string_view name) {
  std::string_view base = base_name(name);
  for (std::string_view prefix : {"ncclDevKernel_", "ncclKernel_"}) {
    if (starts_with(base, prefix)) {
      return {KernelClass::kCommunication, parse_collective(base.substr(prefix.size()))};
    }
  }
  if (starts_with(base, "nccl") && base.find("Kernel") != std::string_view::npos) {
    return {KernelClass::kCommunication, parse_collective(base.substr(4))};
  }
  if (starts_with(name, "[CUDA memcpy") || starts_with(name, "[CUDA memset") ||
      contains_nocase(base, "memcpy") || contains_nocase(base, "memset")) {
    return {KernelClass::kMemory, Collective::kNone};
  }
  return {};
}

std::string_view kernel_class_name(KernelClass cls) {
  switch (cls) {
    case KernelClass::kCompute:
      return "compute";
    case KernelClass::kCommunication:
      return "communication";
    case KernelClass::kMemory:
      return "memory";
  }
  return "compute";
}

std::string_view collective_name(Collective collective) {
  switch (collective) {
    case Collective::kNone:
      return "";
    case Collective::kAllReduce:
      return "AllReduce";
    case Collective::kAllGather:
      return "AllGather";
    case Collective::kReduceScatter:
      return "ReduceScatter";
    case Collective::kBroadcast:
      return "Broadcast";
    case Collective::kReduce:
      return "Reduce";
    case Collective::kSendRecv:
      return "SendRecv";
    case Collective::kAllToAll:
      return "AllToAll";
    case Collective::kOther:
      return "Other";
  }
  return "";
}

}  // namespace strata::analysis
