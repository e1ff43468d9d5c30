// PackedOptional<T, kNone>: an optional integer in the integer's own size, "none" being one
// value the field can never hold (INT64_MIN for a time, UINT64_MAX for a byte count). A
// std::optional<int64_t> takes 16 bytes; a trace of ten million jobs keeps three of them per job
// (docs/perf/sim.md). It reads and converts like std::optional, so fields can switch type
// without their readers changing.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

namespace gw {

template <class T, T kNone>
class PackedOptional {
 public:
  using value_type = T;

  constexpr PackedOptional() noexcept = default;
  constexpr PackedOptional(std::nullopt_t) noexcept {}
  // kNone itself reads back as none: the value is out of the field's range by contract.
  constexpr PackedOptional(T v) noexcept : v_(v) {}
  constexpr PackedOptional(const std::optional<T>& o) noexcept : v_(o ? *o : kNone) {}
  constexpr operator std::optional<T>() const noexcept {
    return has_value() ? std::optional<T>(v_) : std::nullopt;
  }

  constexpr bool has_value() const noexcept { return v_ != kNone; }
  constexpr explicit operator bool() const noexcept { return has_value(); }
  constexpr const T& operator*() const noexcept { return v_; }
  constexpr T& operator*() noexcept { return v_; }
  constexpr const T* operator->() const noexcept { return &v_; }
  constexpr const T& value() const {
    if (!has_value()) throw std::bad_optional_access();
    return v_;
  }
  constexpr T value_or(T fallback) const noexcept { return has_value() ? v_ : fallback; }
  constexpr void reset() noexcept { v_ = kNone; }
  constexpr T& emplace(T v) noexcept { return v_ = v; }

  friend constexpr bool operator==(PackedOptional a, PackedOptional b) noexcept {
    return a.v_ == b.v_;
  }
  friend constexpr bool operator==(PackedOptional a, std::nullopt_t) noexcept {
    return !a.has_value();
  }
  friend constexpr bool operator==(PackedOptional a, const std::optional<T>& b) noexcept {
    return a == PackedOptional(b);
  }
  friend constexpr bool operator==(PackedOptional a, T b) noexcept {
    return a.has_value() && a.v_ == b;
  }

 private:
  T v_ = kNone;
};

using OptionalMs = PackedOptional<int64_t, std::numeric_limits<int64_t>::min()>;
using OptionalBytes = PackedOptional<uint64_t, std::numeric_limits<uint64_t>::max()>;

}  // namespace gw
