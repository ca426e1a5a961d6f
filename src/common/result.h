// Result<T>: a value or an error message, the CLI side's way to report
// failures (shared/DESIGN.md, Conventions). The message names the file, record
// or flag at fault and reads as one line after "strata: ".
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace strata {

struct Error {
  std::string message;
};

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::move(value)) {}
  Result(Error error) : state_(std::move(error)) {}

  bool ok() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<T>(state_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(state_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<Error>(state_);
  }

 private:
  std::variant<T, Error> state_;
};

// For operations that return nothing but can fail.
struct Ok {};
using Status = Result<Ok>;

inline Error make_error(std::string message) {
  return Error{std::move(message)};
}

// Error propagation, written once instead of `if (!x) return x.error();` at
// every call site. Both work in any function returning Result<U> or Status.
//
//   STRATA_TRY(store.write(rows));              // a Status or Result<T>: stop on error
//   STRATA_ASSIGN_OR_RETURN(auto rows, read(db));  // declare or assign from a Result<T>
#define STRATA_RESULT_CONCAT_INNER(a, b) a##b
#define STRATA_RESULT_CONCAT(a, b) STRATA_RESULT_CONCAT_INNER(a, b)

#define STRATA_TRY(expr)                                        \
  do {                                                          \
    auto&& strata_try_result_ = (expr);                         \
    if (!strata_try_result_) return strata_try_result_.error(); \
  } while (0)

#define STRATA_ASSIGN_OR_RETURN(lhs, expr) \
  STRATA_ASSIGN_OR_RETURN_IMPL(STRATA_RESULT_CONCAT(strata_result_, __LINE__), lhs, expr)
#define STRATA_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp) return tmp.error();                      \
  lhs = std::move(tmp).value()

}  // namespace strata
