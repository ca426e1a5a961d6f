#include "symbolize/dwarf_names.h"

#include <dwarf.h>

#include <cstdlib>
#include <optional>
#include <string_view>
#include <vector>

#include "symbolize/symbolizer.h"

namespace strata::symbolize {
namespace {

const char* own_string(Dwarf_Die* die, unsigned attr) {
  Dwarf_Attribute mem;
  return dwarf_formstring(dwarf_attr(die, attr, &mem));
}

bool follow(Dwarf_Die* die, unsigned attr, Dwarf_Die* out) {
  Dwarf_Attribute mem;
  Dwarf_Attribute* a = dwarf_attr(die, attr, &mem);
  return a != nullptr && dwarf_formref_die(a, out) != nullptr;
}

// follow() through the entry's own abstract origin (an inlined or concrete
// instance's parameter keeps its type there). libdw bounds that chain.
bool follow_integrated(Dwarf_Die* die, unsigned attr, Dwarf_Die* out) {
  Dwarf_Attribute mem;
  Dwarf_Attribute* a = dwarf_attr_integrate(die, attr, &mem);
  return a != nullptr && dwarf_formref_die(a, out) != nullptr;
}

const char* linkage_name(Dwarf_Die* die) {
  const char* name = own_string(die, DW_AT_linkage_name);
  return name != nullptr ? name : own_string(die, DW_AT_MIPS_linkage_name);
}

// GCC's base type names as the demangler spells them ("long unsigned int"
// is "unsigned long" in a demangled signature).
std::string_view base_type_spelling(std::string_view name) {
  struct Spelling {
    std::string_view dwarf, demangled;
  };
  static constexpr Spelling kSpellings[] = {
      {"long unsigned int", "unsigned long"},
      {"long int", "long"},
      {"long long int", "long long"},
      {"long long unsigned int", "unsigned long long"},
      {"short int", "short"},
      {"short unsigned int", "unsigned short"},
      {"__int128 unsigned", "unsigned __int128"},
      {"_Bool", "bool"},
  };
  for (const Spelling& s : kSpellings) {
    if (s.dwarf == name) return s.demangled;
  }
  return name;
}

// The enclosing namespaces and types of a declaration, outermost first, as
// "a::(anonymous namespace)::B::". Stops at a function or block (a local
// class: its demangled prefix names the function, which this does not spell).
std::string scope_prefix(Dwarf_Die* die) {
  Dwarf_Die* scopes = nullptr;
  int n = dwarf_getscopes_die(die, &scopes);
  std::string prefix;
  for (int i = 1; i < n; ++i) {  // scopes[0] is the entry itself
    Dwarf_Die* scope = &scopes[i];
    int tag = dwarf_tag(scope);
    const char* name = own_string(scope, DW_AT_name);
    std::string part;
    if (tag == DW_TAG_namespace) {
      part = name != nullptr ? name : "(anonymous namespace)";
    } else if ((tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
                tag == DW_TAG_union_type || tag == DW_TAG_enumeration_type) &&
               name != nullptr) {
      part = name;
    } else {
      break;
    }
    prefix.insert(0, part + "::");
  }
  std::free(scopes);
  return prefix;
}

// A type as the demangler prints it in a parameter list; nullopt for what it
// does not spell (so the caller leaves the whole list out rather than give a
// label that differs from the symbol's).
std::optional<std::string> type_spelling(Dwarf_Die* type, int depth) {
  if (depth > kMaxTypeDepth) return std::nullopt;
  int tag = dwarf_tag(type);
  const char* name = own_string(type, DW_AT_name);
  Dwarf_Die inner;
  bool has_inner = follow(type, DW_AT_type, &inner);
  auto wrapped = [&](const char* suffix) -> std::optional<std::string> {
    std::optional<std::string> base =
        has_inner ? type_spelling(&inner, depth + 1) : std::optional<std::string>("void");
    if (!base) return std::nullopt;
    return *base + suffix;
  };
  switch (tag) {
    case DW_TAG_base_type:
      if (name == nullptr) return std::nullopt;
      return std::string(base_type_spelling(name));
    case DW_TAG_unspecified_type:  // decltype(nullptr)
      if (name == nullptr) return std::nullopt;
      return std::string(name);
    case DW_TAG_typedef:
      return has_inner ? type_spelling(&inner, depth + 1) : std::nullopt;
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
    case DW_TAG_enumeration_type:
      if (name == nullptr) return std::nullopt;
      return scope_prefix(type) + name;
    case DW_TAG_pointer_type:
      if (has_inner && dwarf_tag(&inner) == DW_TAG_subroutine_type) return std::nullopt;
      return wrapped("*");
    case DW_TAG_reference_type:
      return wrapped("&");
    case DW_TAG_rvalue_reference_type:
      return wrapped("&&");
    case DW_TAG_const_type:
      return wrapped(" const");
    case DW_TAG_volatile_type:
      return wrapped(" volatile");
    default:
      return std::nullopt;
  }
}

// Strips top-level const/volatile: a signature ignores them, and so does the
// mangled name the demangler reads.
Dwarf_Die* without_top_cv(Dwarf_Die* type, Dwarf_Die* storage) {
  for (int hop = 0; hop < kMaxTypeDepth; ++hop) {
    int tag = dwarf_tag(type);
    if (tag != DW_TAG_const_type && tag != DW_TAG_volatile_type) return type;
    if (!follow(type, DW_AT_type, storage)) return nullptr;
    type = storage;
  }
  return nullptr;
}

// "(unsigned long, char const*)", plus " const" for a const member
// function; nullopt where a type is not spelled.
std::optional<std::string> parameter_list(Dwarf_Die* function) {
  std::string out = "(";
  bool first = true;
  bool const_member = false;
  Dwarf_Die child;
  if (dwarf_child(function, &child) == 0) {
    size_t seen = 0;
    do {
      if (++seen > 4096) return std::nullopt;  // no real signature is this long
      int tag = dwarf_tag(&child);
      if (tag == DW_TAG_unspecified_parameters) {
        out += first ? "..." : ", ...";
        first = false;
        continue;
      }
      if (tag != DW_TAG_formal_parameter) continue;
      Dwarf_Die type_mem;
      if (!follow_integrated(&child, DW_AT_type, &type_mem)) return std::nullopt;
      if (dwarf_hasattr_integrate(&child, DW_AT_artificial)) {
        // `this`: a pointer to const (or volatile) marks a const member.
        Dwarf_Die pointee;
        if (dwarf_tag(&type_mem) == DW_TAG_pointer_type && follow(&type_mem, DW_AT_type, &pointee))
          const_member = dwarf_tag(&pointee) == DW_TAG_const_type;
        continue;
      }
      Dwarf_Die storage;
      Dwarf_Die* type = without_top_cv(&type_mem, &storage);
      if (type == nullptr) return std::nullopt;
      std::optional<std::string> spelled = type_spelling(type, 0);
      if (!spelled) return std::nullopt;
      if (!first) out += ", ";
      out += *spelled;
      first = false;
    } while (dwarf_siblingof(&child, &child) == 0);
  }
  out += ")";
  if (const_member) out += " const";
  return out;
}

bool lists_parameters(Dwarf_Die* function) {
  Dwarf_Die child;
  if (dwarf_child(function, &child) != 0) return false;
  size_t seen = 0;
  do {
    int tag = dwarf_tag(&child);
    if (tag == DW_TAG_formal_parameter || tag == DW_TAG_unspecified_parameters) return true;
  } while (++seen < 4096 && dwarf_siblingof(&child, &child) == 0);
  return false;
}

bool is_c_unit(Dwarf_Die* die) {
  Dwarf_Die cu;
  if (dwarf_diecu(die, &cu, nullptr, nullptr) == nullptr) return false;
  switch (dwarf_srclang(&cu)) {
    case DW_LANG_C:
    case DW_LANG_C89:
    case DW_LANG_C99:
    case DW_LANG_C11:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string dwarf_function_name(Dwarf_Die* die) {
  // Along abstract_origin / specification: the first linkage name wins; else
  // the name and place of the last entry (the declaration), and the
  // parameters of the first entry on the chain that lists any.
  Dwarf_Die chain[kMaxReferenceHops + 1];
  int length = 0;
  chain[length++] = *die;
  while (length <= kMaxReferenceHops) {
    Dwarf_Die* here = &chain[length - 1];
    if (const char* mangled = linkage_name(here)) return demangle(mangled);
    Dwarf_Die next;
    if (!follow(here, DW_AT_abstract_origin, &next) && !follow(here, DW_AT_specification, &next))
      break;
    if (dwarf_dieoffset(&next) == dwarf_dieoffset(here)) break;
    chain[length++] = next;
  }
  const char* name = nullptr;
  Dwarf_Die* named = nullptr;
  for (int i = length - 1; i >= 0 && name == nullptr; --i) {
    name = own_string(&chain[i], DW_AT_name);
    named = &chain[i];
  }
  if (name == nullptr) return "";
  // A C function, or a C++ one declared extern "C" (external, yet GCC gave
  // it no linkage name): its symbol is the bare name.
  bool external = false;
  for (int i = 0; i < length; ++i) external = external || dwarf_hasattr(&chain[i], DW_AT_external);
  if (external || is_c_unit(named)) return name;
  std::string qualified = scope_prefix(named) + name;
  // The parameters of the entry nearest the declaration that lists any (a
  // function without parameters lists none anywhere).
  for (int i = length - 1; i >= 0; --i) {
    if (!lists_parameters(&chain[i])) continue;
    std::optional<std::string> params = parameter_list(&chain[i]);
    return params ? qualified + *params : qualified;
  }
  return qualified + "()";
}

}  // namespace strata::symbolize
