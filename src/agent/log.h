// One-line messages from the agent to the target's stderr, prefixed
// "strata agent: ". Uses vsnprintf into a stack buffer and one write(2), so
// it neither allocates nor shares stdio's buffer with the program. Not for
// signal handlers (vsnprintf is not async-signal-safe).
#pragma once

namespace strata::agent {

[[gnu::format(printf, 1, 2)]] void log_line(const char* format, ...);

}  // namespace strata::agent
