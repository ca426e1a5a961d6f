// Small string utilities shared by every module.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace strata {

// Splits a command line into words the way a POSIX shell would for a plain
// command: whitespace separates words; '...' and "..." quote; backslash
// escapes. Shell syntax that needs a real shell (pipes, redirections, ';',
// '&', '$', backquotes, globs) is refused with an error that says to use
// `sh -c '...'`, so a command is never silently run differently than typed.
Result<std::vector<std::string>> split_command_line(std::string_view line);

// Quotes a word for display so that split_command_line gives it back.
std::string shell_quote(std::string_view word);
std::string join_command(const std::vector<std::string>& argv);

// Parses a whole string as a number; nullopt when anything is left over.
std::optional<double> parse_double(std::string_view text);
std::optional<long long> parse_int(std::string_view text);

// Makes text from an untrusted source (a program's output, a kernel name)
// safe to print on one terminal line: control bytes become \xNN escapes.
std::string printable(std::string_view text);

// JSON text as nlohmann's dump() writes it, with DEL (0x7f) as \u007f: JSON
// allows the byte raw, a terminal should not get it. In UTF-8 the byte is
// only ever DEL and in JSON text only inside a string, so this is exact.
std::string escape_json_del(std::string json);

// "1 thread", "3 threads", "2 processes": a count and its noun, the one
// spelling every message uses.
std::string plural(long long n, std::string_view one, std::string_view many);

// "Operation not permitted (EPERM)": strerror's text and the errno's name,
// so that a message can be searched for either.
std::string errno_text(int err);

}  // namespace strata
