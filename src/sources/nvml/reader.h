// Internal to the NVML reader: the per-GPU call wrapper shared by gpu_reader*.cpp.
#pragma once

#include <optional>
#include <string>

#include "core/snapshot.h"
#include "sources/nvml/deadline_runner.h"
#include "sources/nvml/gpu_reader.h"
#include "sources/nvml/nvml_library.h"

namespace gw::nvml::detail {

using C = Capability;
// For identity reads, which belong to no capability.
inline constexpr C kNoCap = C::kCount;

// One GPU's calls. In probe mode every call is tried and the capabilities that answer are
// recorded; in sample mode a capability the probe found absent is skipped without a call.
class Reader {
 public:
  Reader(const NvmlLibrary& lib, CallTracker& tracker, nvmlDevice_t dev, bool probing,
         const CapabilitySet& caps, GpuState& out)
      : lib_(lib), t_(tracker), dev_(dev), probing_(probing), caps_(caps), out_(out) {}

  // Calls a device function `s(dev, args...)` for capability `c`; true on SUCCESS.
  template <class F, class... A>
  bool call(C c, const Sym<F>& s, A... args) {
    if (stopped() || !s || !wanted(c)) return false;
    t_.begin(s.name);
    const nvmlReturn_t r = s.fn(dev_, args...);
    t_.end();
    return check(c, s.name, r);
  }

  // Same, but the caller interprets the code (size queries, NVLink probing).
  template <class F, class... A>
  nvmlReturn_t raw(const Sym<F>& s, A... args) {
    if (stopped() || !s) return kFunctionNotFound;
    t_.begin(s.name);
    const nvmlReturn_t r = s.fn(dev_, args...);
    t_.end();
    return r;
  }

  bool check(C c, const char* name, nvmlReturn_t r) {
    if (r == kSuccess) {
      mark(c);
      return true;
    }
    if (r == kNotSupported || r == kFunctionNotFound) return false;
    if (r == kGpuIsLost || r == kResetRequired) {
      out_.access = r == kGpuIsLost ? GpuAccess::kLost : GpuAccess::kResetRequired;
      fail(name, r);
      return false;
    }
    // The capability exists but failed this time (no permission, unknown): keep asking.
    mark(c);
    fail(name, r);
    return false;
  }

  void fail(const char* name, nvmlReturn_t r) {
    t_.begin("nvmlErrorString");
    std::string text = lib_.describe(r);
    t_.end();
    out_.errors.push_back(std::string(name) + ": " + text);
  }

  bool wanted(C c) const { return probing_ || c == kNoCap || caps_.has(c); }
  void mark(C c) {
    if (probing_ && c != kNoCap) found_.set(c);
  }

  bool stopped() const {
    return out_.access == GpuAccess::kLost || out_.access == GpuAccess::kResetRequired;
  }
  bool probing() const { return probing_; }
  const CapabilitySet& found() const { return found_; }
  CallTracker& tracker() { return t_; }
  const NvmlLibrary& lib() const { return lib_; }

 private:
  const NvmlLibrary& lib_;
  CallTracker& t_;
  nvmlDevice_t dev_;
  bool probing_;
  const CapabilitySet& caps_;
  CapabilitySet found_;
  GpuState& out_;
};

// The value a call wrote, when it succeeded. Takes `v` by reference: it is read only after
// the call in the first argument has run (argument evaluation order is unspecified).
template <class V>
std::optional<V> got(bool ok, const V& v) {
  return ok ? std::optional<V>(v) : std::nullopt;
}

inline std::optional<int> as_int(bool ok, const unsigned& v) {
  return ok ? std::optional<int>(static_cast<int>(v)) : std::nullopt;
}

void read_processes(Reader& r, const NvmlApi& a, GpuSample& s);
void probe_nvlinks(Reader& r, const NvmlApi& a, GpuPlan& plan);
void read_nvlinks(Reader& r, const NvmlApi& a, const GpuPlan& plan, GpuSample& s);

}  // namespace gw::nvml::detail
