// Running processes (size-query idiom, two struct layouts), NVLinks and architecture names.
#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "sources/nvml/reader.h"

namespace gw::nvml {
namespace detail {
namespace {

// The list can grow between the size query and the read: ask for a little more.
constexpr Uint kProcessSlack = 8;

template <class Info>
std::optional<std::vector<ProcessInfo>> list_processes(
    Reader& r, const Sym<nvmlReturn_t (*)(Dev, Uint*, void*)>& s) {
  std::vector<Info> buf;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Uint count = static_cast<Uint>(buf.size());
    const nvmlReturn_t ret =
        r.raw(s, &count, buf.empty() ? nullptr : static_cast<void*>(buf.data()));
    if (ret == kInsufficientSize) {
      buf.resize(count + kProcessSlack);
      continue;
    }
    if (!r.check(C::kProcesses, s.name, ret)) return std::nullopt;
    std::vector<ProcessInfo> out;
    out.reserve(count);
    for (Uint i = 0; i < count && i < buf.size(); ++i) {
      ProcessInfo p;
      p.pid = buf[i].pid;
      if (buf[i].usedGpuMemory != kValueNotAvailable) p.used_mem_bytes = buf[i].usedGpuMemory;
      out.push_back(std::move(p));
    }
    return out;
  }
  r.check(C::kProcesses, s.name, kInsufficientSize);
  return std::nullopt;
}

std::optional<std::vector<ProcessInfo>> list(Reader& r,
                                             const Sym<nvmlReturn_t (*)(Dev, Uint*, void*)>& s,
                                             bool v1) {
  if (!s || !r.wanted(C::kProcesses)) return std::nullopt;
  return v1 ? list_processes<nvmlProcessInfo_v1_t>(r, s) : list_processes<nvmlProcessInfo_t>(r, s);
}

void name_processes(Reader& r, const NvmlApi& a, std::vector<ProcessInfo>& procs) {
  if (!a.process_name) return;
  std::array<char, kProcessNameBufferSize> buf{};
  for (ProcessInfo& p : procs) {
    buf[0] = 0;
    r.tracker().begin(a.process_name.name);
    const nvmlReturn_t ret = a.process_name.fn(p.pid, buf.data(), kProcessNameBufferSize);
    r.tracker().end();
    buf.back() = 0;
    if (ret == kSuccess && buf[0] != 0) p.name = buf.data();
  }
}

}  // namespace

void read_processes(Reader& r, const NvmlApi& a, GpuSample& s) {
  auto compute = list(r, a.compute_processes, a.compute_processes_v1);
  auto graphics = list(r, a.graphics_processes, a.graphics_processes_v1);
  if (!compute && !graphics) return;
  std::vector<ProcessInfo> all = compute.value_or(std::vector<ProcessInfo>{});
  for (ProcessInfo& g : graphics.value_or(std::vector<ProcessInfo>{})) {
    // A process using both APIs shows up in both lists; keep it once, as compute.
    const bool dup =
        std::any_of(all.begin(), all.end(), [&](const ProcessInfo& c) { return c.pid == g.pid; });
    if (dup) continue;
    g.graphics = true;
    all.push_back(std::move(g));
  }
  name_processes(r, a, all);
  s.processes = std::move(all);
}

void probe_nvlinks(Reader& r, const NvmlApi& a, GpuPlan& plan) {
  plan.links.clear();
  plan.link_versions.clear();
  for (Uint link = 0; link < kNvLinkMaxLinks && !r.stopped(); ++link) {
    int active = 0;
    const nvmlReturn_t ret = r.raw(a.nvlink_state, link, &active);
    // Past the last link NVML answers INVALID_ARGUMENT; a GPU without NVLink NOT_SUPPORTED.
    if (ret == kInvalidArgument || ret == kNotSupported || ret == kFunctionNotFound) continue;
    if (!r.check(C::kNvLink, a.nvlink_state.name, ret)) continue;
    Uint version = 0;
    if (r.raw(a.nvlink_version, link, &version) != kSuccess) version = 0;
    plan.links.push_back(link);
    plan.link_versions.push_back(version);
  }
}

void read_nvlinks(Reader& r, const NvmlApi& a, const GpuPlan& plan, GpuSample& s) {
  if (!r.wanted(C::kNvLink)) return;
  s.nvlinks.clear();
  s.nvlinks.reserve(plan.links.size());
  for (size_t i = 0; i < plan.links.size() && !r.stopped(); ++i) {
    NvLinkInfo l;
    l.link = plan.links[i];
    if (plan.link_versions[i] != 0) l.version = plan.link_versions[i];
    int active = 0;
    if (!r.call(C::kNvLink, a.nvlink_state, l.link, &active)) continue;
    l.active = active != 0;
    Ull n = 0;
    auto counter = [&](int c) {
      return got(r.raw(a.nvlink_error_counter, l.link, c, &n) == kSuccess, n);
    };
    l.replay_errors = counter(kDlReplay);
    l.recovery_errors = counter(kDlRecovery);
    l.crc_flit_errors = counter(kDlCrcFlit);
    l.crc_data_errors = counter(kDlCrcData);
    s.nvlinks.push_back(l);
  }
}

}  // namespace detail

namespace {
struct ArchName {
  unsigned value;
  const char* name;
};
constexpr std::array<ArchName, 10> kArchitectures = {{{2, "Kepler"},
                                                      {3, "Maxwell"},
                                                      {4, "Pascal"},
                                                      {5, "Volta"},
                                                      {6, "Turing"},
                                                      {7, "Ampere"},
                                                      {8, "Ada"},
                                                      {9, "Hopper"},
                                                      {10, "Blackwell"},
                                                      {13, "Rubin"}}};
}  // namespace

std::optional<std::string> architecture_name(unsigned arch) {
  for (const auto& a : kArchitectures)
    if (a.value == arch) return std::string(a.name);
  return std::nullopt;
}

std::optional<unsigned> architecture_from_name(std::string_view name) {
  for (const auto& a : kArchitectures) {
    const std::string_view n = a.name;
    if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char x, char y) {
          return std::tolower(static_cast<unsigned char>(x)) ==
                 std::tolower(static_cast<unsigned char>(y));
        }))
      return a.value;
  }
  return std::nullopt;
}

}  // namespace gw::nvml
