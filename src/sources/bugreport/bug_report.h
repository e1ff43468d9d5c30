// nvidia-bug-report.log: the sections nvidia-bug-report.sh writes, each opened by a line of
// underscores and a header naming what follows ("/usr/bin/nvidia-smi --query", "dmesg:",
// "*** /var/log/Xorg.0.log", "/usr/bin/lspci -d "10de:*" -v -xxx", "*** /proc/driver/nvidia/...").
// Pure functions over text: the capture reader tracks the section and hands its lines to the
// reader for that section (nvidia-smi -q, kernel log, lspci) or to the rules below.
#pragma once

#include <string_view>

namespace gw::bug_report {

enum class Section {
  kNone,          // not inside a bug report (or before its first separator)
  kAwaitHeader,   // after a separator: the next non-blank line names the section
  kPrologue,      // "Start of NVIDIA bug report log file." and the lines the script adds to it
  kSmi,           // nvidia-smi --query (read by the nvidia-smi readers)
  kKernelLog,     // dmesg:, "Scanning kernel log files ...", journalctl -b (kernel log reader)
  kLspci,         // lspci -v -xxx / -t / -nn (the lspci reader takes what it knows)
  kProcGpu,       // /proc/driver/nvidia/gpus/<bus>/{information,power,registry}: "Key: value"
  kXorg,          // Xorg logs and journalctl _COMM=Xorg: their "[ 25.1] (EE)" lines are not dmesg
  kInstallerLog,  // nvidia-installer.log, nvidia-uninstall.log, DKMS make.log: errors weigh
  kServices,      // systemctl status nvidia-*.service: a failed unit weighs
  kNoGpuState,    // gcc -v, dmidecode, lsusb, ldd, X configs, /sys, /etc, params: no GPU health
  kOther,         // a header not known here: every reader may take its lines (evidence rules)
};

// A separator line: underscores only, at least 20 of them (the script writes 44).
bool is_separator(std::string_view trimmed);
// The section a header line opens.
Section section_of(std::string_view header);
// A short name for notes ("Xorg log", "gcc -v", ...): the header itself for most sections.
std::string_view section_label(Section s);
// A command the script ran, named by its path, that opens a section without a separator line
// before it ("/usr/bin/nvidia-smi --query --unit" follows the --query output directly).
bool is_command_header(std::string_view trimmed);
// "End of NVIDIA bug report log file.": what follows is not the report's.
bool is_end(std::string_view header);
// Lines the script writes inside any section: "*** ls: -r--r--r-- 1 root root ...",
// "*** /path does not exist", "Skipping ... (... not found)".
bool is_script_line(std::string_view trimmed);
// Inside the kernel-log section: the script's sub-headers ("  journalctl -b -0:",
// "  /var/log/messages:", "No NVIDIA kernel messages found ...", "No suitable log found.").
bool is_kernel_log_subheader(std::string_view trimmed);
// Inside the kernel-log section: a journal line that records a command someone ran ("sudo[N]:
// ... COMMAND=/usr/bin/apt install nvidia-driver", "CRON[9]: (user) CMD (nvidia-smi >> x)"),
// brought in by the script's grep for "nvidia-": an audit of commands, no GPU state.
bool is_command_audit(std::string_view trimmed);
// In the sections read here (Xorg, installer, services, /proc/driver/nvidia/gpus), a line that
// reports a failure: Xorg's "(EE)" naming the GPU is the caller's test; the installer's
// "ERROR:" / "-> Error" / make's "Error N"; a unit's "Active: failed"; "GPU Excluded: Yes".
// The caller lists such lines unread (they weigh); the others are the section's routine.
bool is_error_line(Section s, std::string_view trimmed);

}  // namespace gw::bug_report
