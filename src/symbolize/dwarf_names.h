// The name a function's DWARF entry is shown under, for inlined frames and
// functions the ELF symbol table does not name (issue 20 item 6: "inlined
// frames keep their qualified names").
//
// An inlined instance (DW_TAG_inlined_subroutine) points through
// DW_AT_abstract_origin, and often DW_AT_specification, to the declaration
// that carries the name. The name is, in order of preference:
//   1. the demangled DW_AT_linkage_name of any entry on that chain: exactly
//      what the ELF symbol of an out-of-line copy demangles to;
//   2. otherwise (GCC writes no linkage name for members of classes in an
//      anonymous namespace, nor for their free functions) the name rebuilt
//      from the entry tree as the demangler prints it: the enclosing
//      namespaces, classes and structs joined with "::" ("(anonymous
//      namespace)" for an unnamed one), then the parameter types (typedefs
//      resolved, base types spelled "unsigned long", cv after the type,
//      " const" for a const member function), so that
//        cpu_hotspot::(anonymous namespace)::Rng::next()
//      reads the same inlined or called. C functions, and external functions
//      without a linkage name (C++'s extern "C"), keep their bare name, as
//      their symbols do. Where a parameter's type is one the rebuild does
//      not spell (function pointers, pointers to members, unnamed types) the
//      qualified name is given without the parameter list.
//
// The entries come from untrusted files: reference chains are followed at
// most kMaxReferenceHops steps (a chain that loops ends there), types at most
// kMaxTypeDepth deep, and a reference that leads nowhere ends the walk.
#pragma once

#include <elfutils/libdw.h>

#include <cstddef>
#include <string>

namespace strata::symbolize {

inline constexpr int kMaxReferenceHops = 16;
inline constexpr int kMaxTypeDepth = 24;

// "" when no entry on the chain has a name.
std::string dwarf_function_name(Dwarf_Die* die);

}  // namespace strata::symbolize
