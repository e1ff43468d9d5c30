// Result<T>: a value or an Error. The one error type used below main().
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace gw {

// An error names what went wrong and where, so a user can act on it.
struct Error {
  std::string code;     // stable machine code, e.g. "nvml.lib_rm_version_mismatch"
  std::string message;  // one sentence for a person
  std::string where;    // file:line, symbol, GPU, ... (may be empty)

  std::string to_string() const { return where.empty() ? message : where + ": " + message; }
};

inline Error make_error(std::string code, std::string message, std::string where = {}) {
  return Error{std::move(code), std::move(message), std::move(where)};
}

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace gw
