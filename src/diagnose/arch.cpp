// A framework or program built without the GPU's architecture (AppMessageKind::kArchUnsupported,
// sources/app/arch_messages.h): which GPU and capability, what the build supports, and the
// build that would work, from the table of which CUDA toolkits can build for each capability.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>

#include "diagnose/context.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

// Which CUDA toolkits can build code for a compute capability (x10): the first that added it
// and the first that removed it (0: not removed). NVIDIA's CUDA toolkit release notes for each
// version (architectures added and removed), as tabulated in the CUDA article's "GPUs
// supported" section; capabilities not listed are looked up by their major version.
struct ArchRow {
  unsigned cc;
  std::string_view family;
  std::string_view first_cuda;
  std::string_view removed_in;  // "" while supported
};
constexpr std::array<ArchRow, 19> kArchTable = {{
    {30, "Kepler", "4.2", "11.0"},  {35, "Kepler", "5.0", "12.0"},
    {37, "Kepler", "6.5", "12.0"},  {50, "Maxwell", "6.0", "13.0"},
    {52, "Maxwell", "6.5", "13.0"}, {53, "Maxwell", "7.0", "13.0"},
    {60, "Pascal", "8.0", "13.0"},  {61, "Pascal", "8.0", "13.0"},
    {62, "Pascal", "8.0", "13.0"},  {70, "Volta", "9.0", "13.0"},
    {72, "Volta", "10.0", "13.0"},  {75, "Turing", "10.0", ""},
    {80, "Ampere", "11.0", ""},     {86, "Ampere", "11.1", ""},
    {87, "Ampere", "11.4", ""},     {89, "Ada Lovelace", "11.8", ""},
    {90, "Hopper", "11.8", ""},     {100, "Blackwell", "12.8", ""},
    {120, "Blackwell", "12.8", ""},
}};

const ArchRow* arch_row(unsigned cc) {
  for (const ArchRow& r : kArchTable)
    if (r.cc == cc) return &r;
  return nullptr;
}

std::string cc_text(unsigned cc) {
  return fmt::format("{}.{} (sm_{})", cc / 10, cc % 10, cc);
}

// PyTorch's wheel index tag for a CUDA version: "12.8" -> "cu128".
std::string wheel_tag(std::string_view cuda) {
  std::string t = "cu";
  for (char ch : cuda)
    if (ch != '.') t += ch;
  return t;
}

std::string newer_build_remedy(unsigned cc, std::string_view framework) {
  const ArchRow* r = arch_row(cc);
  if (!r)
    return fmt::format(
        "Install a build made with a CUDA toolkit that supports compute capability {} (see "
        "NVIDIA's CUDA GPUs list), and check it with torch.cuda.get_arch_list() or the "
        "framework's build information.",
        cc_text(cc));
  std::string out = fmt::format("{} ({}) needs code built with CUDA {} or newer. ", cc_text(cc),
                                r->family, r->first_cuda);
  if (framework == "pytorch") {
    out += fmt::format(
        "Install a PyTorch build for CUDA >= {} (pip install torch --index-url "
        "https://download.pytorch.org/whl/{} or a newer cuXYZ index",
        r->first_cuda, wheel_tag(r->first_cuda));
    if (cc >= 100) out += "; PyTorch 2.7 is the first release with such builds";
    out += "), then check that torch.cuda.get_arch_list() lists sm_" + std::to_string(cc) + ".";
  } else {
    out +=
        "Install the framework's build for that CUDA version, or rebuild the program with "
        "-gencode for sm_" +
        std::to_string(cc) + ".";
  }
  out += " The host driver must support that CUDA version too (nvidia-smi shows the highest).";
  return out;
}

std::string older_build_remedy(unsigned cc, std::optional<unsigned> min_cc) {
  const ArchRow* r = arch_row(cc);
  std::string out =
      fmt::format("This build dropped compute capability {}{}. ", cc_text(cc),
                  min_cc ? fmt::format(" (its minimum is {})", cc_text(*min_cc)) : std::string());
  if (r && !r->removed_in.empty())
    out += fmt::format(
        "CUDA {} and newer cannot build for it at all: use an older framework release built with "
        "CUDA before {}, or build the framework from source for it (PyTorch: "
        "TORCH_CUDA_ARCH_LIST=\"{}.{}\"), or run on a newer GPU.",
        r->removed_in, r->removed_in, cc / 10, cc % 10);
  else
    out += fmt::format(
        "Use an older framework release that still ships kernels for it, build from source for it "
        "(PyTorch: TORCH_CUDA_ARCH_LIST=\"{}.{}\"), or run on a newer GPU.",
        cc / 10, cc % 10);
  return out;
}

struct ArchCase {
  std::optional<unsigned> cc;
  std::optional<unsigned> min_cc, max_cc;
  std::string gpu, framework;
  std::vector<const AppMessage*> lines;
};

// One case per capability named (a bare "no kernel image" joins the one case when there is
// exactly one, else stands alone).
std::vector<ArchCase> cases_of(const DiagnoseContext& c) {
  std::map<unsigned, ArchCase> by_cc;
  std::vector<const AppMessage*> bare;
  for (const AppMessage* m : app_messages_of(c, AppMessageKind::kArchUnsupported)) {
    if (!m->compute_capability) {
      bare.push_back(m);
      continue;
    }
    ArchCase& a = by_cc[*m->compute_capability];
    a.cc = m->compute_capability;
    if (m->min_capability) a.min_cc = m->min_capability;
    if (m->max_capability) a.max_cc = m->max_capability;
    if (a.gpu.empty()) a.gpu = m->detail;
    if (a.framework.empty()) a.framework = m->framework;
    a.lines.push_back(m);
  }
  std::vector<ArchCase> out;
  for (auto& [cc, a] : by_cc) out.push_back(std::move(a));
  if (out.size() == 1) {
    for (const AppMessage* m : bare) out.front().lines.push_back(m);
  } else if (!bare.empty()) {
    ArchCase a;
    a.framework = bare.front()->framework;
    a.lines = bare;
    out.push_back(std::move(a));
  }
  return out;
}

std::string gpu_names(const DiagnoseContext& c) {
  std::vector<std::string> names;
  for (const GpuSeries& g : c.gpus)
    if (g.info && !g.info->name.empty() &&
        std::find(names.begin(), names.end(), g.info->name) == names.end())
      names.push_back(g.info->name);
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Finding arch_finding(const DiagnoseContext& c, const ArchCase& a) {
  std::vector<std::string> ev;
  for (size_t i = 0; i < a.lines.size() && i < 6; ++i)
    ev.push_back(fmt::format("{}: {}", a.lines[i]->origin, a.lines[i]->text.substr(0, 200)));
  if (a.min_cc && a.max_cc && *a.min_cc != *a.max_cc)
    ev.push_back(fmt::format("the build supports sm_{} to sm_{}", *a.min_cc, *a.max_cc));
  const std::string fw = a.framework == "pytorch"      ? "PyTorch"
                         : a.framework == "tensorflow" ? "TensorFlow"
                                                       : "The program";
  std::string gpu = a.gpu.empty() ? gpu_names(c) : a.gpu;
  if (!a.cc) {
    const std::string title = fmt::format(
        "{} has no GPU code for {} (no kernel image is available for execution on "
        "the device)",
        fw, gpu.empty() ? "this GPU's architecture" : gpu);
    return make_finding("cuda.arch_unsupported", Severity::kCritical, nullptr, title, std::move(ev),
                        "The framework or program was built without this GPU's compute "
                        "capability. Find the GPU's capability (nvidia-smi --query-gpu="
                        "compute_cap --format=csv) and the build's list (PyTorch: "
                        "torch.cuda.get_arch_list()), then install a build made with a CUDA "
                        "toolkit that supports it, or rebuild with -gencode for it.");
  }
  // Too old: the build says its minimum is above the GPU's, or (no minimum stated) the GPU's
  // architecture is older than CUDA 9, which every framework build of recent years targets:
  // such a build left the architecture out on purpose, and no "newer build" brings it back.
  const ArchRow* row = arch_row(*a.cc);
  const bool predates_builds = row && std::stod(std::string(row->first_cuda)) < 9.0;
  const bool too_old = a.min_cc ? *a.cc < *a.min_cc : predates_builds;
  const std::string title =
      too_old ? fmt::format("{} no longer supports {} (compute capability {})", fw,
                            gpu.empty() ? "this GPU" : gpu, cc_text(*a.cc))
              : fmt::format("{} was built without {}'s architecture (compute capability {})", fw,
                            gpu.empty() ? "this GPU" : gpu, cc_text(*a.cc));
  return make_finding(
      "cuda.arch_unsupported", Severity::kCritical, nullptr, title, std::move(ev),
      too_old ? older_build_remedy(*a.cc, a.min_cc) : newer_build_remedy(*a.cc, a.framework));
}

}  // namespace

void rule_cuda_arch_unsupported(const DiagnoseContext& c, Findings& out) {
  for (const ArchCase& a : cases_of(c)) out.push_back(arch_finding(c, a));
}

}  // namespace gw
