// Section rules of nvidia-bug-report.log (bug_report.h). The headers are the ones the script
// has written since its 2009 versions (checked against fixtures 280-286 and the script's text).
#include "sources/bugreport/bug_report.h"

#include <algorithm>
#include <array>

namespace gw::bug_report {

namespace {

bool starts_with(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
bool contains(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

struct Rule {
  std::string_view needle;
  bool prefix;  // true: the header starts with it; false: it appears anywhere
  Section section;
};

// First match wins: Xorg before /var/log (the installer log stays kOther: its errors are
// about the driver), nvidia-smi before the no-state list ("nvidia-settings" is not smi).
constexpr std::array kRules{
    Rule{"Start of NVIDIA bug report", true, Section::kPrologue},
    Rule{"End of NVIDIA bug report", true, Section::kPrologue},
    Rule{"nvidia-smi --query --unit", false, Section::kNoGpuState},  // S-class units only
    Rule{"nvidia-smi", false, Section::kSmi},
    Rule{"dmesg", false, Section::kKernelLog},
    Rule{"Scanning kernel log files", true, Section::kKernelLog},
    Rule{"_COMM=X", false, Section::kXorg},
    Rule{"_COMM=gdm-x-session", false, Section::kXorg},
    Rule{"/var/log/Xorg", false, Section::kXorg},
    Rule{"/var/log/XFree86", false, Section::kXorg},
    Rule{".local/share/xorg/Xorg", false, Section::kXorg},
    Rule{"journalctl -b", true, Section::kKernelLog},
    Rule{"systemctl status", false, Section::kServices},
    Rule{"nvidia-installer.log", false, Section::kInstallerLog},
    Rule{"nvidia-uninstall.log", false, Section::kInstallerLog},
    Rule{"/var/lib/dkms/", false, Section::kInstallerLog},
    Rule{"lspci -t", false, Section::kNoGpuState},  // the bus tree: no health state
    Rule{"lspci", false, Section::kLspci},
    Rule{"/proc/driver/nvidia/./gpus/", false, Section::kProcGpu},
    Rule{"/proc/driver/nvidia/gpus/", false, Section::kProcGpu},
    Rule{"*** ls: ", true, Section::kNoGpuState},  // a listing of /sys links, no header
    Rule{"*** /sys/", true, Section::kNoGpuState},
    Rule{"*** /etc/", true, Section::kNoGpuState},
    Rule{"*** /usr/share/", true, Section::kNoGpuState},
    Rule{"*** /proc/driver/nvidia/./params", true, Section::kNoGpuState},
    Rule{"*** /proc/driver/nvidia/./registry", true, Section::kNoGpuState},
    Rule{"*** /proc/driver/nvidia/./warnings/README", true, Section::kNoGpuState},
    Rule{"*** /proc/driver/nvidia/params", true, Section::kNoGpuState},
    Rule{"*** /proc/driver/nvidia/registry", true, Section::kNoGpuState},
    Rule{"*** /proc/asound/", true, Section::kNoGpuState},
    Rule{"*** /proc/version", true, Section::kNoGpuState},
    Rule{"*** /proc/cpuinfo", true, Section::kNoGpuState},
    Rule{"*** /proc/meminfo", true, Section::kNoGpuState},
    Rule{"*** /proc/cmdline", true, Section::kNoGpuState},
    Rule{"*** /proc/interrupts", true, Section::kNoGpuState},
    Rule{"*** /proc/iomem", true, Section::kNoGpuState},
    Rule{"*** /proc/mtrr", true, Section::kNoGpuState},
    Rule{"*** /proc/modules", true, Section::kNoGpuState},
    Rule{"*** /proc/pci", true, Section::kNoGpuState},
    Rule{"*** /proc/sys/", true, Section::kNoGpuState},
    Rule{"*** /home/", true, Section::kNoGpuState},
    Rule{"*** /root/", true, Section::kNoGpuState},
    Rule{"ldd ", true, Section::kNoGpuState},
    Rule{"Found Vulkan loader", true, Section::kNoGpuState},
    Rule{"Vulkan loader not found", true, Section::kNoGpuState},
    Rule{"lsusb", false, Section::kNoGpuState},
    Rule{"dmidecode", false, Section::kNoGpuState},
    Rule{"modinfo", false, Section::kNoGpuState},
    Rule{"Using built-in specs.", true, Section::kNoGpuState},  // gcc -v
    Rule{"xset -q", true, Section::kNoGpuState},
    Rule{"nvidia-settings -q", true, Section::kNoGpuState},
    Rule{"xrandr", false, Section::kNoGpuState},
    Rule{"glxinfo", false, Section::kNoGpuState},
    Rule{"vulkaninfo", false, Section::kNoGpuState},
    Rule{"base64 ", true, Section::kNoGpuState},
    Rule{"coredumpctl", false, Section::kNoGpuState},
    Rule{"/sbin/lsmod", true, Section::kNoGpuState},
    Rule{"/bin/lsmod", true, Section::kNoGpuState},
    Rule{"/usr/sbin/lsmod", true, Section::kNoGpuState},
    Rule{"Triggering SysRq", true, Section::kNoGpuState},
    Rule{"Running window manager properties", true, Section::kNoGpuState},
    Rule{"nvidia-debugdump", false, Section::kNoGpuState},  // base64 of a binary dump
    Rule{"acpidump", false, Section::kNoGpuState},
};

}  // namespace

bool is_separator(std::string_view t) {
  if (t.size() < 20) return false;
  for (const char c : t)
    if (c != '_') return false;
  return true;
}

Section section_of(std::string_view h) {
  for (const Rule& r : kRules)
    if (r.prefix ? starts_with(h, r.needle) : contains(h, r.needle)) return r.section;
  return Section::kOther;
}

std::string_view section_label(Section s) {
  switch (s) {
    case Section::kPrologue:
      return "prologue";
    case Section::kSmi:
      return "nvidia-smi";
    case Section::kKernelLog:
      return "kernel log";
    case Section::kLspci:
      return "lspci";
    case Section::kProcGpu:
      return "/proc/driver/nvidia/gpus";
    case Section::kXorg:
      return "Xorg log";
    case Section::kInstallerLog:
      return "installer log";
    case Section::kServices:
      return "services";
    case Section::kNoGpuState:
      return "no GPU state";
    case Section::kOther:
      return "other";
    case Section::kNone:
    case Section::kAwaitHeader:
      break;
  }
  return "none";
}

bool is_command_header(std::string_view t) {
  for (std::string_view dir : {"/usr/bin/", "/usr/sbin/", "/bin/", "/sbin/"})
    if (starts_with(t, dir)) return section_of(t) != Section::kOther;
  return false;
}

bool is_end(std::string_view header) {
  return starts_with(header, "End of NVIDIA bug report");
}

bool is_script_line(std::string_view t) {
  if (starts_with(t, "*** ls: ")) return true;
  if (starts_with(t, "*** ") && ends_with(t, "does not exist")) return true;
  return starts_with(t, "Skipping ") && ends_with(t, "not found)");
}

bool is_kernel_log_subheader(std::string_view t) {
  if (ends_with(t, ":") && (starts_with(t, "journalctl -b") || starts_with(t, "/var/log/")))
    return true;
  return starts_with(t, "No NVIDIA kernel messages found") || t == "No suitable log found.";
}

bool is_command_audit(std::string_view t) {
  if (contains(t, " sudo[") && contains(t, "COMMAND=")) return true;
  // cron's record of a job it started: "CRON[1124]: (user) CMD (nvidia-smi >> log)".
  const size_t cron = std::min(t.find(" CRON["), t.find(" cron["));
  return cron != std::string_view::npos && contains(t.substr(cron), ") CMD (");
}

bool is_error_line(Section s, std::string_view t) {
  switch (s) {
    case Section::kXorg:
      return contains(t, "(EE)");
    case Section::kInstallerLog:
      return starts_with(t, "ERROR:") || starts_with(t, "-> Error") || starts_with(t, "-> ERROR") ||
             (contains(t, "***") && contains(t, "Error "));
    case Section::kServices:
      return starts_with(t, "Active: failed");
    case Section::kProcGpu:
      return starts_with(t, "GPU Excluded:") && contains(t, "Yes");
    default:
      return false;
  }
}

}  // namespace gw::bug_report
