// SharedName: an immutable string in one pointer, shared by its copies (an atomic count). A job's
// user, account and QoS repeat across millions of jobs of a trace: as std::string each costs
// 32 bytes a job, as a SharedName 8, and copies of a job share the text instead of copying it
// (docs/perf/sim.md). It reads like a const std::string.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <compare>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace gw {

class SharedName {
 public:
  SharedName() noexcept = default;
  SharedName(std::string_view text)
      : rep_(text.empty() ? nullptr : new Rep{{1}, std::string(text)}) {}
  SharedName(const std::string& text) : SharedName(std::string_view(text)) {}
  SharedName(const char* text) : SharedName(std::string_view(text)) {}
  SharedName(std::string&& text) : rep_(text.empty() ? nullptr : new Rep{{1}, std::move(text)}) {}
  SharedName(const SharedName& o) noexcept : rep_(o.rep_) {
    if (rep_ != nullptr) rep_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  SharedName(SharedName&& o) noexcept : rep_(std::exchange(o.rep_, nullptr)) {}
  SharedName& operator=(SharedName o) noexcept {
    std::swap(rep_, o.rep_);
    return *this;
  }
  ~SharedName() { release(); }

  const std::string& str() const noexcept { return rep_ != nullptr ? rep_->text : no_text(); }
  operator const std::string&() const noexcept { return str(); }
  operator std::string_view() const noexcept { return str(); }
  bool empty() const noexcept { return rep_ == nullptr; }
  size_t size() const noexcept { return str().size(); }
  const char* data() const noexcept { return str().data(); }
  const char* c_str() const noexcept { return str().c_str(); }
  // Whether two names share one text (copies of one name), without comparing the text.
  bool same_text_as(const SharedName& o) const noexcept { return rep_ == o.rep_; }

  friend bool operator==(const SharedName& a, const SharedName& b) noexcept {
    return a.rep_ == b.rep_ || a.str() == b.str();
  }
  friend bool operator==(const SharedName& a, std::string_view b) noexcept { return a.str() == b; }
  friend bool operator==(const SharedName& a, const std::string& b) noexcept {
    return a.str() == b;
  }
  friend bool operator==(const SharedName& a, const char* b) noexcept { return a.str() == b; }
  friend std::strong_ordering operator<=>(const SharedName& a, const SharedName& b) noexcept {
    return a.str() <=> b.str();
  }
  friend std::ostream& operator<<(std::ostream& os, const SharedName& n) { return os << n.str(); }
  friend std::string operator+(const SharedName& a, std::string_view b) {
    return a.str() + std::string(b);
  }
  friend std::string operator+(std::string_view a, const SharedName& b) {
    return std::string(a) + b.str();
  }

 private:
  struct Rep {
    std::atomic<uint32_t> refs;
    std::string text;
  };
  static const std::string& no_text() noexcept {
    static const std::string kEmpty;
    return kEmpty;
  }
  void release() noexcept {
    if (rep_ != nullptr && rep_->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) delete rep_;
    rep_ = nullptr;
  }
  Rep* rep_ = nullptr;
};

}  // namespace gw

template <>
struct fmt::formatter<gw::SharedName> : fmt::formatter<std::string_view> {
  template <class Context>
  auto format(const gw::SharedName& n, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(std::string_view(n.str()), ctx);
  }
};

template <>
struct std::hash<gw::SharedName> {
  size_t operator()(const gw::SharedName& n) const noexcept {
    return std::hash<std::string_view>{}(n.str());
  }
};
