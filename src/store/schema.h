// Schema v1 of a strata trace (docs/formats.md): the DDL and fixed rows that
// TraceWriter puts into every new file, kept apart from the writer so that
// tests and docs can see exactly what a file holds.
#pragma once

#include <span>
#include <string_view>

struct sqlite3;

namespace strata::store::schema {

// The version of Nsight Systems' export schema whose tables and columns
// strata mirrors (the reference export: nsys 2025.3.2, export schema 3.20.3).
inline constexpr std::string_view kNsysExportSchemaVersion = "3.20.3";

// CREATE TABLE statements: first the Nsight Systems tables, then strata's.
std::span<const std::string_view> nsys_tables();
std::span<const std::string_view> strata_tables();

// Fills the ENUM_* tables with Nsight Systems' values.
std::span<const std::string_view> enum_rows();

}  // namespace strata::store::schema
