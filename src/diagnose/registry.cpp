// The one table of every rule: code, area, highest severity, title, what it checks, remedy and
// the function that runs it. Order here is the order docs/checks.md lists them.
#include <algorithm>
#include <array>

#include "diagnose/context.h"
#include "diagnose/diagnose.h"
#include "diagnose/rules.h"

namespace gw {
namespace {

using S = Severity;

constexpr std::array kRules = {
    // ---- thermal ----
    RuleInfo{"thermal.near_slowdown", "thermal", S::kWarning,
             "GPU temperature at or near its max operating or slowdown temperature",
             "Least headroom in the window to any known limit is 5 C or less: max operating "
             "temperature first (laptops and some boards cap far below slowdown), then slowdown; "
             "on drivers that give only T.Limit margins, the margin minus each limit's offset.",
             "Improve cooling: fans, intakes, dust, room at 16-25 C, spacing between cards, "
             "thermal paste.",
             rule_thermal_near_slowdown},
    RuleInfo{"thermal.sw_slowdown", "thermal", S::kWarning,
             "Driver slows the GPU to cool it (SW thermal slowdown)",
             "Clock reason SW thermal slowdown (0x20) in any sample, with the share of the window; "
             "info only when the GPU and memory read far below their limits (inconsistent flag).",
             "Improve cooling: fans, intakes, dust, room at 16-25 C, spacing between cards, "
             "thermal paste.",
             rule_thermal_sw_slowdown},
    RuleInfo{
        "thermal.hw_slowdown", "thermal", S::kCritical,
        "Hardware thermal slowdown: clocks cut by half or more",
        "Clock reason HW thermal slowdown (0x40) in any sample.",
        "Improve cooling now; check fans and airflow, then thermal paste; the GPU is overheating.",
        rule_thermal_hw_slowdown},
    RuleInfo{"thermal.hotter_than_peers", "thermal", S::kWarning,
             "One GPU much hotter than its peers under the same load",
             "Mean temperature at least 15 C above the median of the other GPUs in the same load "
             "group (loaded vs idle); needs 2+ GPUs in the group.",
             "Check that card's airflow, fan, spacing and thermal paste; swap slots to tell slot "
             "from card.",
             rule_thermal_hotter_than_peers},
    RuleInfo{"thermal.uneven", "thermal", S::kWarning,
             "Hot GPUs far above the coolest one at similar load",
             "Mean temperature 12 C or more above the coolest other GPU in the same load group "
             "(3+ GPUs), while within 10 C of max operating temperature (80 C when unknown) and "
             "not already hotter than the median by 15 C.",
             "Improve airflow: the middle cards of a stack run hottest; add spacing or chassis "
             "fans, check intakes and dust.",
             rule_thermal_uneven},
    RuleInfo{"thermal.fan_max_hot", "thermal", S::kWarning,
             "Fans at full speed and the GPU still hot",
             "Fan at 95% or more while the GPU is within 5 C of max operating temperature (80 C "
             "when unknown).",
             "Cooling has no headroom left: lower the room/inlet temperature, clean dust, improve "
             "chassis airflow.",
             rule_thermal_fan_max_hot},
    RuleInfo{"clocks.low_under_load", "thermal", S::kWarning, "Clocks far below maximum under load",
             "In most loaded samples the SM clock is below 60% of its maximum, or of the highest "
             "clock seen in the window when the maximum is unknown (dmon, CSV without "
             "clocks.max.*); lists the limiters reported and tells a thermal cap (temperature "
             "rising or near the limit) from a power/platform cap (temperature flat).",
             "Follow the limiter named in the evidence (thermal, power, application clocks); with "
             "none named, check power limit and cooling.",
             rule_clocks_low_under_load},
    RuleInfo{"clocks.unknown_reason", "thermal", S::kInfo,
             "Legacy \"Unknown\" clock reason reported",
             "Clock reason bit 0x8000000000000000 (Unknown, old drivers) set in any sample: kept "
             "and named, never dropped.",
             "Nothing to act on alone; read it with the other limiters and update the driver if "
             "clocks are low.",
             rule_clocks_unknown_reason},
    RuleInfo{"clocks.reason_history", "thermal", S::kInfo,
             "Clock limiters active in the past (SW/HW thermal, power brake, board limit)",
             "Lifetime violation counter of SW thermal, HW thermal, power brake, thermal, board or "
             "reliability limit at 60 s or more while that reason is not active in any sample: "
             "reported as past, with its seconds.",
             "Nothing to fix now; if jobs were slow at those times, check cooling (thermal) or "
             "platform power (power brake) then.",
             rule_clocks_reason_history},
    // ---- power ----
    RuleInfo{"power.hw_power_brake", "power", S::kCritical,
             "External power brake asserted (PSU / BMC / baseboard)",
             "Clock reason HW power brake (0x80) in any sample; warning instead of critical when "
             "clocks are still near max; says 'check the whole node' when every GPU shows it.",
             "Check PSUs, power cables, BMC/IPMI power capping and power-brake policies; when "
             "every GPU shows it, check the whole node.",
             rule_power_hw_brake},
    RuleInfo{"power.hw_slowdown", "power", S::kCritical,
             "Hardware slowdown without a thermal or power-brake sub-reason",
             "Clock reason HW slowdown (0x8) with neither 0x40 nor 0x80 in the same sample.",
             "Check PSUs, power cables and connectors, and BMC power capping; check the whole node "
             "when every GPU shows it.",
             rule_power_hw_slowdown},
    RuleInfo{
        "power.sw_cap", "power", S::kWarning, "GPU power-capped while busy",
        "Clock reason SW power cap (0x4) in loaded samples; info when the limit is the default "
        "(expected at full load), warning when the limit was lowered. Capped samples whose load "
        "is unknown (no utilization, no Idle reason) or light are reported as such, never as "
        "idle.",
        "Expected at full load; if the limit was lowered, restore the default with nvidia-smi -pl.",
        rule_power_sw_cap},
    RuleInfo{"power.sw_cap_idle", "power", S::kInfo, "SW power cap flagged while idle (no impact)",
             "Clock reason SW power cap only in affirmatively idle samples (utilization under 5% "
             "or the Idle reason): the flag costs nothing without load.",
             "Nothing to do: this is not power starvation; do not raise the power limit or change "
             "the PSU for it.",
             rule_power_sw_cap_idle},
    RuleInfo{"power.limit_below_default", "power", S::kWarning, "Power limit set below the default",
             "Enforced power limit below 98% of the default limit.",
             "Restore the default with sudo nvidia-smi -i <gpu> -pl <default watts> unless it was "
             "lowered on purpose.",
             rule_power_limit_below_default},
    RuleInfo{
        "power.cap_history", "power", S::kInfo, "SW power capping in the past, not active now",
        "Lifetime SW power cap counter of 60 s or more while the reason is not active in any "
        "sample (history, not a current fault).",
        "Nothing to do now; if jobs were slow at those times, check the power limit and cooling.",
        rule_power_cap_history},
    // ---- memory (VRAM) ----
    RuleInfo{"memory.near_full", "memory", S::kWarning,
             "GPU memory nearly full (out-of-memory risk)",
             "Peak used/total VRAM in the window at 90% or more.",
             "Reduce memory per step: a smaller batch with gradient accumulation, mixed precision "
             "(BF16/FP16), gradient checkpointing; free cached memory you do not need.",
             rule_memory_near_full},
    RuleInfo{
        "memory.held_by_idle", "memory", S::kWarning,
        "GPU memory held by processes that do no work",
        "Idle in every sample (utilization under 5%, or the Idle reason when utilization is "
        "unknown; video engines quiet) while 50% or more of VRAM is in use; a single snapshot "
        "gives both readings (stale holder or starving job) and how to tell them apart.",
        "Find the holders (nvidia-smi --query-compute-apps=pid,name,used_memory --format=csv) and "
        "stop stale jobs or notebook kernels; a finished job that keeps its memory is stuck.",
        rule_memory_held_by_idle},
    // ---- PCIe ----
    RuleInfo{"pcie.gen_below_max", "pcie", S::kWarning, "PCIe generation below max while busy",
             "Current link generation below the link maximum in most loaded samples (idle GPUs "
             "drop to Gen1 to save power: ignored).",
             "Reseat the card, check the riser/cable and the slot's BIOS setting (PCIe speed "
             "Auto/GenN), and compare with another slot.",
             rule_pcie_gen_below_max},
    RuleInfo{"pcie.width_below_max", "pcie", S::kWarning,
             "PCIe link narrower than the GPU supports",
             "Current link width below the maximum width in any sample, idle or not (width does "
             "not power-save); also lspci -vv LnkSta width below LnkCap for a GPU no snapshot "
             "describes.",
             "Move the card to a full x16 slot, check bifurcation settings, risers and cables, and "
             "reseat it; on cloud instances x8 may be by design.",
             rule_pcie_width_below_max},
    RuleInfo{"pcie.link_speed_below_max", "pcie", S::kInfo,
             "PCIe link speed below its capability (lspci / sysfs, load unknown)",
             "For an NVIDIA device no snapshot describes: LnkSta speed below LnkCap (lspci -vv, "
             "'downgraded'); a narrower width is reported as pcie.width_below_max. Idle GPUs "
             "lower their speed to save power, so this is info until checked under load.",
             "Re-check under load (nvidia-smi -q -d PCIE while a job runs); if it stays low, "
             "reseat the card, check the riser and the slot's BIOS speed setting.",
             rule_pcie_link_facts},
    RuleInfo{"pcie.host_limited", "pcie", S::kWarning,
             "Slot or host limits the GPU's PCIe generation",
             "The GPU supports a higher generation than the link maximum (host/slot lower); a host "
             "higher than the GPU is fine.",
             "Use a slot wired to the CPU at the GPU's generation, update the BIOS, check the "
             "riser's rating.",
             rule_pcie_host_limited},
    RuleInfo{"pcie.replays_rising", "pcie", S::kWarning, "PCIe replay counter rising",
             "Replay counter rose by 5 or more and at 8 or more per minute across the window (a "
             "single snapshot's lifetime count is history).",
             "Reseat the card and riser/cables, check for bent pins or a loose slot; run dcgmi "
             "diag -r 3 if it continues.",
             rule_pcie_replays_rising},
    RuleInfo{"pcie.cross_socket", "pcie", S::kInfo, "GPU pairs that talk across CPU sockets",
             "Topology (nvidia-smi topo -m) shows SYS links between GPUs on different NUMA "
             "nodes, or whose NUMA affinity is not given (SYS on one NUMA node is "
             "topology.gpus_via_host).",
             "Place multi-GPU jobs on GPUs of one socket (see nvidia-smi topo -m) or enable "
             "NVLink/P2P paths.",
             rule_pcie_cross_socket},
    RuleInfo{"topology.gpus_via_host", "pcie", S::kInfo,
             "GPU pairs with no NVLink or shared PCIe switch (all traffic through the host)",
             "SYS links between GPUs that report the same NUMA node: GPU-to-GPU traffic (NCCL, "
             "P2P copies) crosses the host's PCIe root complex and CPU interconnect.",
             "Expect slow multi-GPU collectives: keep tensor-parallel work on one GPU, prefer data "
             "parallelism with gradient accumulation, or use a host with NVLink / a PCIe switch.",
             rule_topology_gpus_via_host},
    RuleInfo{"topology.nvlink_groups", "pcie", S::kInfo, "NVLink joins the GPUs only in groups",
             "In topo -m, NVLink joins some GPUs but not all: a collective across the groups "
             "runs at the PCIe or host path between them (the closest one is named).",
             "Place multi-GPU jobs inside one NVLink group when they fit.",
             rule_topology_nvlink_groups},
    RuleInfo{"topology.nics_far", "pcie", S::kInfo,
             "No NIC on the same PCIe switch as any GPU (GPUDirect RDMA ineffective)",
             "topo -m NIC rows: every NIC's closest GPU link is PHB, NODE or SYS (one NIC at PIX "
             "or PXB to some GPU is enough for NCCL to use it).",
             "For multi-node training put the RDMA NICs behind the GPUs' PCIe switches, or expect "
             "inter-node traffic to be staged through host memory.",
             rule_topology_nics_far},
    // ---- driver / CUDA / configuration ----
    RuleInfo{"driver.version_mismatch", "driver", S::kCritical, "Driver/library version mismatch",
             "The GPU source failed with nvml.lib_rm_version_mismatch, a captured \"Failed to "
             "initialize NVML: Driver/library version mismatch\" (nvidia-smi, "
             "nvidia-container-cli), or the kernel's NVRM \"API mismatch\" line (names both "
             "versions); when that kernel line was parsed as such, driver.api_mismatch reports "
             "the mismatch (these failures as its evidence) and this defers to it.",
             "Reboot, or stop every GPU process and reload the modules: sudo rmmod nvidia_uvm "
             "nvidia_drm nvidia_modeset nvidia && sudo modprobe nvidia.",
             rule_driver_version_mismatch},
    RuleInfo{"driver.no_gpu_visible", "driver", S::kCritical, "No NVIDIA GPU visible, and why",
             "The GPU source failed or listed no GPUs; host facts name the cause: container "
             "without GPU access, nouveau, kernel module not loaded, /dev/nvidia* missing, "
             "user-space library missing, or no NVIDIA device on the PCI bus.",
             "Follow the cause in the finding: load the module, blacklist nouveau, pass GPUs into "
             "the container, or install the user-space driver.",
             rule_driver_no_gpu},
    RuleInfo{"driver.gpus_missing", "driver", S::kCritical,
             "GPUs on the PCI bus that the driver does not show",
             "More NVIDIA GPUs in sysfs than the GPU source lists.",
             "Check dmesg for NVRM errors on the missing addresses, their driver binding "
             "(vfio-pci?), power cables and seating; reboot to re-probe.",
             rule_driver_gpus_missing},
    RuleInfo{
        "cuda.driver_too_old", "cuda", S::kCritical,
        "Driver too old for an installed CUDA toolkit or framework runtime",
        "Running driver below the minimum for a CUDA toolkit or a framework's CUDA runtime "
        "(minor-version compatibility floor, CUDA -> driver table); a newer driver with an older "
        "runtime is fine.",
        "Install a driver at least the version named, or use a framework build for an older CUDA.",
        rule_cuda_driver_too_old},
    RuleInfo{"cuda.minor_compat", "cuda", S::kInfo, "CUDA runs through minor-version compatibility",
             "Driver at or above the minor-version compatibility floor but below the toolkit's own "
             "driver minimum.",
             "Fine for most work; PTX JIT of newer PTX fails. Update the driver for the full "
             "feature set.",
             rule_cuda_minor_compat},
    RuleInfo{"cuda.compatible", "cuda", S::kInfo,
             "Driver and the CUDA the capture names are compatible",
             "The capture shows the running driver and at least one CUDA need (toolkit, "
             "framework build), and the driver meets every one's full driver minimum: the "
             "affirmative answer, with each need and the driver as evidence.",
             "Nothing to do.", rule_cuda_compatible},
    RuleInfo{
        "config.persistence_off", "config", S::kInfo, "Persistence mode off",
        "Persistence mode reads Disabled (Linux).",
        "Enable it: sudo systemctl enable --now nvidia-persistenced (or sudo nvidia-smi -pm 1).",
        rule_config_persistence_off},
    RuleInfo{"config.app_clocks_lowered", "config", S::kWarning,
             "Application clocks set below default",
             "Application graphics clock below the default application clock.",
             "Reset them: sudo nvidia-smi -i <gpu> -rac.", rule_config_app_clocks_lowered},
    RuleInfo{"config.mig_enabled", "config", S::kInfo,
             "MIG enabled: device utilization N/A is not 0%", "MIG mode enabled.",
             "Nothing to fix; read per-instance metrics with DCGM (dcgmi dmon) instead of device "
             "utilization.",
             rule_config_mig_enabled},
    RuleInfo{"config.compute_mode", "config", S::kWarning, "Compute mode exclusive or prohibited",
             "Compute mode other than Default: info when exclusive, warning when prohibited.",
             "If unintended: sudo nvidia-smi -i <gpu> -c DEFAULT.", rule_config_compute_mode},
    // ---- memory health (ECC) ----
    RuleInfo{"ecc.dbe_volatile", "ecc", S::kCritical,
             "Uncorrectable (double-bit) ECC errors since driver load",
             "Volatile DBE counter above 0.",
             "Restart affected jobs, drain the node and reset the GPU; if errors return, replace "
             "the GPU.",
             rule_ecc_dbe_volatile},
    RuleInfo{"ecc.retired_pages_limit", "ecc", S::kCritical,
             "Retired memory pages at the replacement threshold",
             "Retired pages 63 or more in total, or more than 15 double-bit retirements (critical "
             "when the window shows more than one a week).",
             "Plan a replacement (RMA) of the GPU; drain it when critical.",
             rule_ecc_retired_pages_limit},
    RuleInfo{"ecc.retirement_pending", "ecc", S::kWarning, "Page retirement pending",
             "Pending page retirement (blacklist) reads Yes.",
             "Reset the GPU or reboot when it is free so the page is retired.",
             rule_ecc_retirement_pending},
    RuleInfo{"ecc.row_remap_pending", "ecc", S::kWarning, "Row remap pending: GPU reset needed",
             "Remapped rows pending reads Yes (lifetime corrected errors alone are not a fault).",
             "Reset the GPU once no job uses it (sudo nvidia-smi -r -i <gpu>) or reboot the node "
             "so the remap takes effect; not a replacement case unless remapping fails.",
             rule_ecc_row_remap_pending},
    RuleInfo{"ecc.row_remap_failure", "ecc", S::kCritical, "Row remapping failed: replace the GPU",
             "Remapping failure occurred reads Yes.",
             "Drain the node and open a replacement (RMA) case for this GPU.",
             rule_ecc_row_remap_failure},
    RuleInfo{"ecc.uncorrectable_lifetime", "ecc", S::kCritical,
             "Uncorrectable ECC errors over the GPU's life: recurring, RMA candidate for SRAM",
             "Aggregate SRAM uncorrectable count above 4 (NVIDIA's SRAM RMA line; warning) or "
             "SRAM Threshold Exceeded Yes (critical); otherwise an aggregate uncorrectable count "
             "above this driver session's (warning: the fault recurs).",
             "Run DCGM diagnostics (dcgmi diag -r 3); replace (RMA) the GPU when the SRAM "
             "threshold is exceeded or the errors keep returning.",
             rule_ecc_uncorrectable_lifetime},
    // ---- kernel log (Xid) and GPU reachability ----
    RuleInfo{"xid.application", "xid", S::kWarning, "Application-caused Xid (13, 31, 43, 45, ...)",
             "Xid lines whose catalog cause is the application, per GPU and Xid, with counts and "
             "bursts; info when they follow an unrecovered PCIe error on the same GPU (the link "
             "failure is the cause).",
             "Restart the job; debug the program (compute-sanitizer); run DCGM diagnostics if it "
             "recurs on one GPU only.",
             rule_xid_application},
    RuleInfo{"xid.driver", "xid", S::kCritical, "Driver/firmware Xid (109, 119, 120, ...)",
             "Xid lines whose catalog cause is the driver or GPU firmware (GSP).",
             "Follow the catalog action (usually reset the GPU); update the driver if it repeats.",
             rule_xid_driver},
    RuleInfo{"xid.hardware", "xid", S::kCritical, "Hardware Xid",
             "Xid lines whose catalog cause is hardware (except 79, see gpu.fallen_off_bus).",
             "Follow the catalog action (reset or drain); run dcgmi diag -r 3; RMA if it recurs.",
             rule_xid_hardware},
    RuleInfo{"xid.memory", "xid", S::kCritical, "Memory Xid (48, 63, 64, 92, 94, 95, ...)",
             "Xid lines whose catalog cause is GPU memory (ECC, row remapping, containment).",
             "Restart affected jobs, reset the GPU to activate remaps, check ECC/row-remap status; "
             "replace on remap failure.",
             rule_xid_memory},
    RuleInfo{"xid.nvlink", "xid", S::kCritical, "NVLink Xid (74, 144-150, ...)",
             "Xid lines whose catalog cause is NVLink/C2C; NVLink5 lines judged by their "
             "Fatal/Nonfatal token.",
             "Drain and reset the GPU; check NVLink/NVSwitch health (nvidia-smi nvlink -s); "
             "contact the vendor if it recurs.",
             rule_xid_nvlink},
    RuleInfo{"xid.thermal_power", "xid", S::kCritical, "Power Xid (54, 162-165)",
             "Xid lines whose catalog cause is thermal/power (auxiliary power, power smoothing).",
             "Check the GPU's power cables and PSU.", rule_xid_thermal_power},
    RuleInfo{"xid.other", "xid", S::kWarning, "Other or unknown Xid",
             "Xid numbers the catalog marks unused/informational, or does not know (reported, "
             "never dropped).",
             "Look the number up in NVIDIA's Xid catalog; contact support if it repeats.",
             rule_xid_other},
    RuleInfo{"nvswitch.sxid", "xid", S::kCritical, "NVSwitch SXid errors",
             "SXid lines from nvidia-nvswitch, per SXid code, with links; notes when a GPU fell "
             "off the bus in the same log (switch links go down with it).",
             "If a GPU was lost, fix that first; otherwise check NVSwitch/fabric manager health "
             "and contact the vendor for fatal SXids.",
             rule_nvswitch_sxid},
    RuleInfo{"gpu.fallen_off_bus", "gpu", S::kCritical, "GPU fallen off the bus (lost)",
             "Xid 79, a 'GPU has fallen off the bus' kernel line, an NVML GPU_IS_LOST event, or "
             "the live source marking the GPU lost.",
             "Drain the node and reboot (power-cycle) it. If it recurs: check power cables and "
             "PSU, reseat the GPU and riser, check temperatures, then RMA.",
             rule_gpu_fallen_off_bus},
    RuleInfo{"gpu.hung", "gpu", S::kCritical, "GPU not answering (NVML calls hang)",
             "The live source marked the GPU hung: a call did not return within its deadline.",
             "Drain the node; reset the GPU (sudo nvidia-smi -r -i <gpu>) or reboot; check dmesg "
             "for Xid 119/79.",
             rule_gpu_hung},
    RuleInfo{"gpu.reset_required", "gpu", S::kCritical, "GPU needs a reset",
             "The live source reported RESET_REQUIRED for the GPU, or nvidia-smi's GPU Recovery "
             "Action is not None, or its GPU Reset Status reads Reset Required: Yes or Drain and "
             "Reset Recommended: Yes.",
             "Stop jobs on it and reset it (sudo nvidia-smi -r -i <gpu>) or reboot the node.",
             rule_gpu_reset_required},
    RuleInfo{"gpu.fabric_not_ready", "gpu", S::kCritical,
             "GPU not registered with the NVSwitch fabric: CUDA cannot use it",
             "The GPU's fabric State reads Not Started or In Progress (nvidia-smi -q Fabric, "
             "-q -x <fabric>, --query-gpu fabric.state) in its last sample.",
             "Check the fabric manager: systemctl status nvidia-fabricmanager and its log "
             "(/var/log/fabricmanager.log); it must be the driver's exact version and running "
             "(the GPU Operator's driver container runs it there). If it runs and the State stays "
             "In Progress, look for SXid lines and NVLink errors, then reset the GPUs or reboot.",
             rule_gpu_fabric_not_ready},
    RuleInfo{
        "gpu.fabric_error", "gpu", S::kCritical, "GPU's NVSwitch fabric registration failed",
        "The GPU's fabric State reads Completed with a Status other than Success (e.g. "
        "Insufficient Resources).",
        "Read the fabric manager's log for the GPU and its NVSwitches, check NVLink (nvidia-smi "
        "nvlink -s) and SXid lines, restart the fabric manager; a GPU that keeps failing "
        "registration is drained and taken to the vendor.",
        rule_gpu_fabric_error},
    RuleInfo{"gpu.fabric_unhealthy", "gpu", S::kWarning,
             "GPU registered with the NVSwitch fabric, but the fabric is unhealthy",
             "The GPU's fabric State reads Completed and its fabric health (NVML's health mask, "
             "nvidia-smi -q Fabric > Health, -q -x <fabric><health>) flags a condition: "
             "Summary Unhealthy or Limited Capacity, Bandwidth Degraded, Route Recovery in "
             "progress, Route Unhealthy, Access Timeout Recovery, or an Incorrect Configuration. "
             "Critical when a route is unhealthy or the configuration incorrect.",
             "Check NVLink (nvidia-smi nvlink -s and -e), SXid lines in the kernel log and the "
             "fabric manager's log; on multi-node NVLink (GB200 NVL72) also the tray's cables, "
             "partition and the NVLink switch controller. A route recovery in progress may clear "
             "on its own: sample again; if the condition stays, drain the GPU and reset it.",
             rule_gpu_fabric_unhealthy},
    RuleInfo{"fabricmanager.failed", "gpu", S::kCritical,
             "NVIDIA Fabric Manager failed: NVSwitch GPUs cannot register",
             "The fabric manager's journal, systemctl status or fabricmanager.log says it "
             "failed: its version does not match the driver's, it found nothing to manage "
             "(NV_WARN_NOTHING_TO_DO), its configuration is invalid, or the service exited with "
             "a failure. Warning when it started again later in the capture, or when it had "
             "nothing to manage and no GPU waits for the fabric.",
             "Match the fabric manager to the driver's exact version, fix its configuration, "
             "or disable it where there is no NVSwitch; the finding names which.",
             rule_fabricmanager_failed},
    RuleInfo{"fabricmanager.nvswitch_error", "gpu", S::kCritical,
             "The fabric manager reports NVSwitch errors",
             "fabricmanager.log (or its journal) says \"detected NVSwitch non-fatal error\" or "
             "\"NVSwitch fatal error\" with the switch's bus id and port: a warning for "
             "non-fatal ones, critical when one is fatal.",
             "Non-fatal: count them per switch and port, a repeating port points at a link. "
             "Fatal: drain, reset the GPUs and NVSwitches or reboot, vendor case if it repeats.",
             rule_fabricmanager_nvswitch_error},
    RuleInfo{"fabricmanager.running", "gpu", S::kInfo,
             "NVIDIA Fabric Manager started and configured the NVSwitches",
             "The fabric manager's lines say it started (\"Successfully configured all the "
             "available NVSwitches\", \"Started NVIDIA fabric manager service\", Active: active "
             "(running)) and none says it failed: the affirmative answer.",
             "Nothing to do; each GPU's fabric State should read Completed.",
             rule_fabricmanager_running},
    RuleInfo{"gpu.access_error", "gpu", S::kWarning, "GPU could not be read",
             "The live source could not read the GPU (no permission or another error).",
             "Run as root or a user with access to /dev/nvidia*; see the listed errors.",
             rule_gpu_access_error},
    RuleInfo{
        "gpu.reading_failed", "gpu", S::kWarning,
        "A reading of the GPU failed (Unknown Error, ERR!)",
        "nvidia-smi printed a failure instead of a value ('[Unknown Error]' in --query-gpu CSV, "
        "'ERR!' in its table) for one or more fields of the GPU. Critical when the name or "
        "four fields and more failed (the driver cannot talk to the GPU); a warning when one "
        "sensor or one query failed while the rest reads normally.",
        "One field (a fan, a limit): check that sensor (nvidia-smi -q -i <gpu>), the fan "
        "physically, and the driver version. Most fields: look for Xid 79/119/154 in the "
        "kernel log for that bus id, drain the node and reset the GPU or reboot.",
        rule_gpu_reading_failed},
    // ---- utilization / input pipeline ----
    RuleInfo{"util.input_cpu_bound", "utilization", S::kWarning,
             "GPU waits on single-threaded data loading",
             "Utilization averages 5-50% while a compute process holds the GPU and that process "
             "uses 85-150% CPU (one core at its limit).",
             "Load data in parallel: DataLoader(num_workers=N, pin_memory=True, "
             "persistent_workers=True, prefetch_factor=2+); move decoding/augmentation off the "
             "main thread or onto the GPU (DALI).",
             rule_util_input_cpu_bound},
    RuleInfo{"util.storage_bound", "utilization", S::kWarning, "GPU waits on storage",
             "Utilization averages 5-50% with a compute process while CPU iowait or I/O pressure "
             "(PSI) is 20% or more.",
             "Stage the dataset on local NVMe or in RAM, use a streaming/sharded format "
             "(WebDataset, TFRecord), and prefetch with more DataLoader workers.",
             rule_util_storage_bound},
    RuleInfo{"util.transfer_bound", "utilization", S::kWarning,
             "GPU waits on host-to-device copies",
             "Utilization averages 5-50% with a compute process while PCIe traffic is at 50% or "
             "more of the link's bandwidth.",
             "Use pinned memory (pin_memory=True) and non_blocking copies, keep data on the GPU "
             "between steps, send smaller dtypes, overlap copies with compute (CUDA streams).",
             rule_util_transfer_bound},
    RuleInfo{"util.low", "utilization", S::kInfo, "GPU mostly waiting while a job holds it",
             "Utilization averages 5-50% with a compute process and no visible CPU, storage or "
             "PCIe cause.",
             "Profile a few steps to see what the GPU waits on (data loading, host sync, "
             "communication); raise DataLoader workers and batch size if memory allows.",
             rule_util_low},
    RuleInfo{"util.video_engine_busy", "utilization", S::kInfo,
             "Video encoder/decoder load (not idle)",
             "Encoder or decoder utilization averages 50% or more: low SM utilization is then "
             "expected, the GPU is not idle.",
             "Nothing to fix unless the engine is saturated: then spread streams over more GPUs.",
             rule_util_video_engine},
    // ---- NCCL_DEBUG=INFO transport choices (nccl_transport.cpp) ----
    RuleInfo{"nccl.transport_socket", "app", S::kWarning,
             "NCCL uses TCP sockets between nodes (NET/Socket)",
             "NCCL_DEBUG=INFO channel lines \"... via NET/Socket/N\": the job's inter-node "
             "traffic goes through the kernel's TCP stack.",
             "Make the InfiniBand/RoCE devices visible to the job (rdma-core, the ib devices in "
             "the container, NCCL_IB_HCA), or the cloud's plugin (aws-ofi-nccl, nccl-rdma-sharp); "
             "check that NCCL_IB_DISABLE is not set. \"NET/IB : No device found\" says why.",
             rule_nccl_transport_socket},
    RuleInfo{"nccl.transport", "app", S::kInfo, "NCCL transports in use",
             "NCCL_DEBUG=INFO channel lines via P2P, SHM, NET/IB (with or without GDRDMA): "
             "said with what each implies.",
             "SHM between GPUs of one node means P2P is off (NCCL_P2P_DISABLE, ACS, no peer "
             "access); NET/IB without GDRDMA: load nvidia-peermem.",
             rule_nccl_transport_info},
    RuleInfo{"nccl.settings", "app", S::kWarning,
             "NCCL's configuration: what the environment set and the network it chose",
             "NCCL_DEBUG=INFO lines 'NCCL_X set by environment to V', 'Using network X', "
             "'NET/IB : No device found', 'NET/Socket : Using [0]if:addr': listed as "
             "configuration (info); a warning when a setting costs bandwidth "
             "(NCCL_P2P_DISABLE=1, NCCL_IB_DISABLE=1, NCCL_SOCKET_IFNAME=lo, "
             "NCCL_NET_GDR_LEVEL=LOC or 0), with what it costs.",
             "Unset the costly variable where the job's environment sets it (job script, "
             "container image, /etc/nccl.conf, ~/.nccl.conf); set NCCL_SOCKET_IFNAME to an "
             "interface the other nodes can reach.",
             rule_nccl_settings},
    RuleInfo{"nccl.network_mismatch", "app", S::kWarning,
             "NCCL ranks chose different networks (IB on some, Socket on others)",
             "Two or more 'Using network X' choices in one capture: ranks that cannot reach "
             "each other over one transport.",
             "Make InfiniBand/RoCE usable on every node (the driver, rdma-core, "
             "/dev/infiniband in the container) or set NCCL_IB_DISABLE=1 everywhere to use "
             "sockets on all ranks.",
             rule_nccl_network_mismatch},
    // ---- stress and benchmark tools (bench.cpp) ----
    RuleInfo{"burn.faulty", "app", S::kCritical, "gpu_burn found wrong results on the GPU",
             "gpu_burn's closing summary says FAULTY for the GPU, or its progress lines count "
             "errors (WARNING!): the GPU's results under load differ from the reference.",
             "Take the GPU out of service (drain it), run the field diagnostic (dcgmi diag -r 3 "
             "or the vendor's), check dmesg for Xids and ECC counters; replace it if it repeats.",
             rule_burn_faulty},
    RuleInfo{"burn.died", "app", S::kCritical, "gpu_burn's stress worker died",
             "A worker marked DIED! or counting -1 iterations, \"No clients are alive!\", or "
             "\"Couldn't init a GPU test\": the GPU stopped working under load, or the test "
             "could not run on it.",
             "Look for an Xid or 'fallen off the bus' in dmesg at that time; if the test could "
             "not load its kernel, rebuild gpu_burn for the GPU's architecture (COMPUTE=xx) and "
             "run it again.",
             rule_burn_died},
    RuleInfo{"burn.hotter_than_peer", "app", S::kWarning,
             "A GPU runs much hotter than its peers under gpu_burn",
             "Under the same load, the GPU's peak temperature is 80 C or more and 15 C or more "
             "above the median peak of the other GPUs of the run.",
             "Check that GPU's cooling: fans, airflow, dust, a blocked neighbouring slot, the "
             "thermal paste; its clocks will drop first.",
             rule_burn_hotter_than_peer},
    RuleInfo{"burn.no_work", "app", S::kWarning, "gpu_burn measured no work on a GPU",
             "A gpu_burn run that started, yet a GPU never shows work done (no progress line, "
             "or 0 Gflop/s throughout): its closing OK only says no error was counted.",
             "Run it again and watch the progress lines; build gpu_burn for the GPU's "
             "architecture (COMPUTE=xx), check that the GPU is not in use or in a restricted "
             "compute mode, and look at dmesg.",
             rule_burn_no_work},
    RuleInfo{"burn.ok", "app", S::kInfo, "gpu_burn ran without errors",
             "Every GPU of a gpu_burn run computed (work measured) without errors and none "
             "died.",
             "Nothing to fix on the GPUs' arithmetic.", rule_burn_ok},
    RuleInfo{"nccltests.busbw_drop", "app", S::kWarning,
             "nccl-tests' bus bandwidth collapses at large sizes",
             "In an nccl-tests table (all_reduce_perf and friends), from 1 MiB up, a size's bus "
             "bandwidth falls under half of the best reached at a smaller size.",
             "Compare NCCL_DEBUG=INFO at the two sizes (protocol, algorithm, transport); check "
             "NCCL_BUFFSIZE, memory registration (NCCL_NET_GDR_LEVEL, nvidia-peermem) and the "
             "network's MTU and congestion settings.",
             rule_nccltests_busbw_drop},
    RuleInfo{"nccltests.busbw_low", "app", S::kWarning,
             "nccl-tests' bus bandwidth is far under what its GPUs' path carries",
             "The best bus bandwidth at 32 MiB or more is under half of the path's figure: "
             "NCCL's own plan (maxBw), or the slowest hop of the best ring over the run's GPUs "
             "in topo -m (NVLink links x the model's per-link rate, PCIe x16 of its generation).",
             "Check NCCL's transport (NCCL_DEBUG=INFO), P2P settings, ACS/IOMMU, PCIe generation "
             "and width under load, NVLink state.",
             rule_nccltests_busbw_low},
    RuleInfo{"nccl.topology", "app", S::kInfo, "NCCL's view of the paths between the GPUs",
             "NCCL_DEBUG=INFO's \"=== System : maxBw ...\" line and GPU-to-GPU path dump: the "
             "path types and their GB/s, whether NCCL sees any NVLink.",
             "Keep a job's GPUs on the fastest paths; compare nccl-tests with maxBw.",
             rule_nccl_topology},
    RuleInfo{"nccltests.busbw", "app", S::kInfo, "What nccl-tests reached",
             "The best bus bandwidth of an nccl-tests table, with its size, the average and the "
             "devices the run names.",
             "Compare with the link: NVLink gives hundreds of GB/s per GPU, PCIe 4.0 x16 about "
             "20-25 GB/s, a 100 Gb/s NIC about 12 GB/s.",
             rule_nccltests_busbw},
    RuleInfo{"p2p.enabled_slower_than_disabled", "app", S::kWarning,
             "Peer-to-peer copies are slower than copies through the host",
             "p2pBandwidthLatencyTest: the median pair of a P2P=Enabled bandwidth matrix is "
             "under 75% of the P2P=Disabled one of the same direction (copies staged through "
             "host memory).",
             "P2P over this PCIe path is throttled or broken: check ACS on the PCIe switches and "
             "the IOMMU (iommu=pt or off), the switch's P2P support and the BIOS; until then "
             "NCCL_P2P_DISABLE=1 (or a lower NCCL_P2P_LEVEL) is faster.",
             rule_p2p_enabled_slower},
    RuleInfo{"p2p.pair_slow", "app", S::kWarning,
             "A GPU pair copies far slower than the other pairs",
             "In a p2pBandwidthLatencyTest or nvbandwidth bandwidth matrix (P2P on, 3 GPUs or "
             "more), a pair direction under half the median of the matrix's pairs.",
             "Check that pair's path: nvidia-smi topo -m (a different switch or socket), "
             "nvidia-smi nvlink -s / -e for links down or erroring; reseat or replace the bridge.",
             rule_p2p_pair_slow},
    RuleInfo{"bandwidth.host_copy_uneven", "app", S::kWarning,
             "The same host-device copy is far slower in one run than in another",
             "bandwidthTest run more than once (e.g. under numactl on each node): the same "
             "direction, memory kind, size and device under half as fast in one run.",
             "The slow run's CPUs or pinned buffers were on the other socket: run the job on the "
             "GPU's own NUMA node (nvidia-smi topo -m, CPU and NUMA Affinity; numactl "
             "--cpunodebind=N --membind=N, or the launcher's CPU binding).",
             rule_host_copy_uneven},
    RuleInfo{"p2p.no_peer_access", "app", S::kInfo, "GPU pairs without peer-to-peer access",
             "p2pBandwidthLatencyTest's P2P Connectivity Matrix shows 0 for a pair.",
             "Normal across CPU sockets on many boards; under one PCIe switch or with NVLink it "
             "is not: check ACS, the IOMMU and nvidia-smi topo -p2p r.",
             rule_p2p_no_access},
    // ---- training logs with step timing (training.cpp) ----
    RuleInfo{"training.input_starved", "app", S::kWarning,
             "Training waits for its input (data loading is the bottleneck)",
             "A training log that times its steps (mmcv/mmdetection \"time\" and \"data_time\", "
             "a script's \"load_data_time\" and \"train_step_time\", Lua Torch's "
             "\"DataLoadingTime\", PyTorch's ImageNet example and timm's \"Time\" and "
             "\"Data\", torchvision's MetricLogger \"time\" and \"data\"): over the steps "
             "read after the first (the loader's start-up, said apart), a "
             "quarter or more of the time is spent waiting for the next batch.",
             "More loader workers (num_workers), pinned memory and prefetching, faster storage "
             "or a cached/preprocessed dataset, enough shared memory (/dev/shm) for the workers.",
             rule_training_input_starved},
    RuleInfo{"training.input_ok", "app", S::kInfo, "The input keeps up with training",
             "Same reading as training.input_starved, with less than a quarter of the step time "
             "waiting for data: a slow job is not slowed by its input.",
             "Nothing to fix in the input; look at the model, batch size and GPU.",
             rule_training_input_ok},
    // ---- application and tool errors found in captures (app_errors.cpp) ----
    RuleInfo{"memory.cuda_oom", "app", S::kWarning,
             "CUDA out of memory in the application, with the cause its figures point to",
             "A PyTorch/TensorFlow/JAX out-of-memory message; its figures decide the cause: a "
             "request larger than the GPU, other processes holding 1 GiB / 5% or more, "
             "fragmentation (reserved but unallocated 25% or more of what the allocator holds, "
             "and free + cached would fit), a request larger than free + cached, or the job's "
             "own working set. Figures beyond the card's total are called inconsistent, never "
             "subtracted.",
             "Smaller batch with gradient accumulation, BF16/FP16, activation checkpointing; "
             "expandable_segments:True for fragmentation; stop other holders.",
             rule_app_cuda_oom},
    RuleInfo{
        "nccl.error", "app", S::kWarning, "NCCL communication failed",
        "An NCCL error message (ncclUnhandledCudaError, ncclSystemError, ...) without a "
        "peer-access failure that explains it.",
        "Rerun with NCCL_DEBUG=INFO to see the failing transport; check that every rank runs "
        "the same NCCL, that GPUs are visible to each rank, and the network (NCCL_SOCKET_IFNAME, "
        "InfiniBand) for inter-node jobs.",
        rule_app_nccl_error},
    RuleInfo{"nccl.timeout", "app", S::kWarning, "NCCL collective timed out (watchdog)",
             "An NCCL watchdog / collective operation timeout message.",
             "Find the rank that stopped first (its own log, dmesg for Xid on its node, OOM, a "
             "hung data loader); set TORCH_NCCL_ASYNC_ERROR_HANDLING=1 so the job fails fast; "
             "raise the timeout only for known long operations.",
             rule_app_nccl_timeout},
    RuleInfo{"nccl.desync", "app", S::kWarning,
             "NCCL ranks stopped at different collectives (desync)",
             "NCCL watchdog / flight-recorder timeout lines of several ranks read together: "
             "in one process group, ranks stopped at different SeqNums (or at one SeqNum in "
             "different collectives); absorbs nccl.timeout. SeqNums thousands apart are "
             "taken as different groups, not a desync.",
             "Look at the ranks furthest behind first: a collective skipped or added on some "
             "ranks (data-dependent branches, uneven last batches, rank-0-only code with a "
             "collective), a crash or a hang outside NCCL; rerun with "
             "TORCH_NCCL_TRACE_BUFFER_SIZE set (flight recorder) or "
             "TORCH_NCCL_DESYNC_DEBUG=1 to see each rank's last collectives.",
             rule_app_nccl_desync},
    RuleInfo{"cuda.peer_access_unsupported", "app", S::kWarning,
             "GPU peer-to-peer access not supported between two GPUs",
             "CUDA error 217 \"peer access is not supported between these two devices\" (usually "
             "under an NCCL P2P/IPC transport); absorbs the NCCL error it causes.",
             "Work around with NCCL_P2P_DISABLE=1 (NCCL falls back to shared memory); check "
             "nvidia-smi topo -p2p r, ACS/IOMMU settings in the BIOS/kernel, and update NCCL.",
             rule_app_peer_access},
    RuleInfo{
        "cuda.driver_insufficient", "app", S::kCritical,
        "\"CUDA driver version is insufficient for CUDA runtime version\"",
        "The CUDA runtime error 35 message (also PyTorch's \"The NVIDIA driver on your "
        "system is too old (found version N)\"); with the driver and the runtime's CUDA version "
        "known (captured nvidia-smi, collect_env, nvcc, the message), says whether the driver "
        "really is too old or supports that CUDA (then the cause is compat libraries or "
        "container mounts).",
        "Upgrade the driver or use a build for the CUDA the driver supports; when the driver "
        "supports it, fix LD_LIBRARY_PATH / cuda-compat / container driver mounts.",
        rule_app_driver_insufficient},
    RuleInfo{"cuda.no_device", "app", S::kCritical, "No CUDA-capable device is detected",
             "The CUDA runtime's \"no CUDA-capable device is detected\" message.",
             "Check CUDA_VISIBLE_DEVICES (empty or wrong ids hide every GPU), start containers "
             "with --gpus all, and that nvidia-smi sees the GPUs on the host.",
             rule_app_no_cuda_device},
    RuleInfo{"driver.smi_cannot_communicate", "app", S::kCritical,
             "nvidia-smi cannot communicate with the NVIDIA driver",
             "nvidia-smi's \"has failed because it couldn't communicate with the NVIDIA driver\" "
             "message.",
             "The kernel module is not loaded: sudo modprobe nvidia and read dmesg; after a kernel "
             "update rebuild it (sudo dkms autoinstall), check Secure Boot signing, then reboot.",
             rule_app_smi_no_driver},
    RuleInfo{"gpu.no_device_handle", "app", S::kCritical,
             "The driver cannot get a handle for a GPU",
             "nvidia-smi's \"Unable to determine the device handle for GPU ...\" message.",
             "Read dmesg for Xid 79 / RmInitAdapter failures on that GPU; drain the node and "
             "reboot; if it recurs check power cables and seating, then RMA.",
             rule_app_no_device_handle},
    RuleInfo{"container.no_gpu_runtime", "app", S::kCritical,
             "Docker cannot give the container GPUs (no NVIDIA runtime)",
             "Docker's \"could not select device driver \"\" with capabilities: [[gpu]]\" message.",
             "Install nvidia-container-toolkit, run sudo nvidia-ctk runtime configure "
             "--runtime=docker and restart Docker (sudo systemctl restart docker).",
             rule_app_docker_no_gpu},
    RuleInfo{"driver.nvml_init_failed", "app", S::kCritical, "A program could not initialize NVML",
             "\"Failed to initialize NVML\" without the version-mismatch wording (\"Unknown "
             "Error\", or nothing after it), from nvidia-smi, dcgm-exporter, the device plugin "
             "or a job; the DCGM host engine failing on it (\"Error starting nv-hostengine: "
             "DCGM initialization error\") is the same failure.",
             "In a container (dcgm-exporter, the device plugin, a job): start it with the NVIDIA "
             "runtime (runtimeClassName: nvidia, --gpus all) so that the driver's libraries and "
             "/dev/nvidia* are given to it; an Unknown Error that appears in a container that "
             "worked before is the known loss of device access after systemctl daemon-reload on "
             "cgroup v2 (use CDI, or nvidia-ctk system create-dev-char-symlinks --create-all, "
             "and restart the container). On the host: is the driver loaded (lsmod | grep "
             "nvidia, dmesg), and does nvidia-smi work?",
             rule_app_nvml_init_failed},
    RuleInfo{"driver.windows_event", "app", S::kWarning,
             "The NVIDIA Windows driver (nvlddmkm) logged a GPU reset or error",
             "Event Viewer's text of an nvlddmkm event (\"The description for Event ID 153 from "
             "source nvlddmkm cannot be found ...\", its data \"Error occurred on GPUID: N\") "
             "and the Display source's 4101 (\"Display driver nvlddmkm stopped responding and "
             "has successfully recovered\"): 153 and 4101 are a reset after a hang (TDR), 13 "
             "and 14 a graphics exception.",
             "Repeated resets under light load point at the driver or the card: clean-install the "
             "driver (DDU), run at stock clocks and power limits, check the PSU and cooling; "
             "raise TdrDelay only for compute kernels that legitimately run long; if resets "
             "persist with another driver, test the card in another machine (RMA).",
             rule_app_windows_driver_event},
    RuleInfo{"slurm.gpu_count_low", "app", S::kCritical,
             "Slurm drained a node that reported fewer GPUs than configured",
             "slurmctld's \"gres/gpu count reported lower than configured (N < M)\" (older "
             "Slurm: \"gres/gpu count too low\"), in its log or in scontrol show node's "
             "Reason=; one finding per node, with the found and configured counts.",
             "On the node: nvidia-smi -L and dmesg (a GPU fallen off the bus, Xid 79, or not "
             "probed: reseat, power-cycle, RMA); MIG mode changes what NVML reports (with "
             "AutoDetect=nvml the instances replace the GPU in the count): make gres.conf and "
             "slurm.conf's Gres=gpu:N match what the node now has, restart slurmd, then "
             "scontrol update NodeName=<node> State=RESUME.",
             rule_slurm_gpu_count_low},
    RuleInfo{"slurm.gres_device_missing", "app", S::kCritical,
             "slurmd cannot find a GPU device file its gres.conf names",
             "slurmd's \"fatal: can't stat gres.conf file /dev/nvidiaN\" (and the \"error: "
             "Waiting for gres.conf file\" before it), in its log or journal; one finding per "
             "device file.",
             "The file exists while the NVIDIA driver is loaded and has made it: on the node run "
             "nvidia-smi and lsmod | grep nvidia (no module: install or rebuild the driver for "
             "this kernel); create the files with nvidia-modprobe -c 0 -u (or start "
             "nvidia-persistenced) before slurmd, e.g. with After= in its unit; if lspci no "
             "longer shows the GPU, fix or remove it and make gres.conf (File= lines, or "
             "AutoDetect=nvml) match the GPUs present; then restart slurmd.",
             rule_slurm_gres_device_missing},
    RuleInfo{"container.device_unhealthy", "app", S::kWarning,
             "Kubernetes withholds a GPU the NVIDIA device plugin marked unhealthy",
             "The device plugin's \"XidCriticalError: Xid=N on Device=GPU-...\" / \"device "
             "marked unhealthy\" / \"Marking it unhealthy\" lines (every wording since 2018), one "
             "finding per GPU with the Xid's meaning; or kubectl describe node showing "
             "Allocatable nvidia.com/gpu below Capacity.",
             "Act on the Xid; once the GPU is checked and reset, restart the device plugin's pod "
             "(it never marks a GPU healthy again by itself).",
             rule_container_device_unhealthy},
    RuleInfo{"container.plugin_no_devices", "app", S::kCritical,
             "The NVIDIA device plugin found no GPUs (no NVML) and advertises none",
             "The plugin's \"Detected non-NVML platform\" / \"could not load NVML library\" / "
             "\"No devices found. Waiting indefinitely.\" lines (one finding), or a node whose "
             "Allocatable nvidia.com/gpu is 0 (warning when no plugin line says why).",
             "Check the host's driver (nvidia-smi); run the plugin with the NVIDIA runtime "
             "(runtimeClassName nvidia / nvidia-ctk runtime configure) and restart its pod.",
             rule_container_plugin_no_devices},
    RuleInfo{"container.admission_failed", "app", S::kWarning,
             "The kubelet refused a GPU pod (UnexpectedAdmissionError)",
             "\"Pod Allocate failed due to ...\" for nvidia.com/gpu or the device plugin, with "
             "Requested / Available; a lost GPU named in the plugin's error is said.",
             "Compare Allocatable with the GPUs pods hold and the plugin's unhealthy devices; a "
             "lost GPU: drain and reboot the node; else restart the kubelet.",
             rule_container_admission_failed},
    RuleInfo{"container.hook_failed", "app", S::kCritical,
             "The NVIDIA container toolkit's hook fails: no GPU container can start",
             "\"nvidia-container-cli: <stage> error: <cause>\" (on the line or the next one), "
             "one finding per cause: driver not loaded, libnvidia-ml not found, CUDA requirement "
             "unsatisfied, unknown device. On NVML's version mismatch it is info beside "
             "driver.version_mismatch, which carries the verdict.",
             "Fix what the cause names on the host: load or install the driver, upgrade it for "
             "the image's CUDA, or ask for a GPU that exists.",
             rule_container_hook_failed},
    RuleInfo{"container.gpu_operator_not_ready", "app", S::kWarning,
             "GPU Operator components are not ready: the node advertises no GPU",
             "kubectl get ds / get pods rows of the operator's GPU components (device plugin, "
             "gpu-feature-discovery, dcgm-exporter, the validator, toolkit, driver) with fewer "
             "pods ready than desired or a state other than Running, and a `describe pod` of "
             "one that is not Running (its init container and container runtime are said).",
             "Read the validator's init container logs (driver-validation, toolkit-validation); "
             "check that the container runtime runs the NVIDIA hook (CRI-O hooks_dir, "
             "containerd's nvidia runtime).",
             rule_container_gpu_operator_not_ready},
    RuleInfo{"container.gpu_unschedulable", "app", S::kWarning,
             "The scheduler found no node with enough free GPUs for a pod",
             "A FailedScheduling event with \"Insufficient nvidia.com/gpu\" (nodes short of GPUs "
             "of the nodes considered); a node that advertises GPUs in the same capture is said.",
             "Compare the pod's GPU limit with each node's Allocatable minus Allocated "
             "resources; check node selectors, affinity and taints.",
             rule_container_gpu_unschedulable},
    RuleInfo{"cuda.arch_unsupported", "app", S::kCritical,
             "The framework or program was built without the GPU's architecture",
             "PyTorch's \"... with CUDA capability sm_120 is not compatible with the current "
             "PyTorch installation\" (with its list of supported sm_ values), its \"no longer "
             "supports this GPU because it is too old\", TensorFlow's \"Ignoring visible gpu "
             "device ... minimum required Cuda capability\", and the CUDA error \"no kernel "
             "image is available for execution on the device\" (209), one finding per "
             "capability.",
             "Install a build made with a CUDA toolkit that supports the GPU's capability (the "
             "finding names the version and PyTorch's wheel index), or for a GPU the build "
             "dropped, an older release or a source build for it.",
             rule_cuda_arch_unsupported},
    RuleInfo{"cuda.launch_failure", "app", S::kWarning,
             "CUDA kernel crashed (unspecified launch failure)",
             "The CUDA \"unspecified launch failure\" message.",
             "Read dmesg for the Xid logged at that time (13/31/43: the program; 48/79/94/95: the "
             "GPU); rerun with CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer to find the kernel; "
             "run dcgmi diag -r 3 if it recurs on one GPU only.",
             rule_app_launch_failure},
    RuleInfo{
        "cuda.illegal_address", "app", S::kWarning, "CUDA illegal memory access",
        "The CUDA \"an illegal memory access was encountered\" message.",
        "Usually a bug in a kernel or an out-of-range index: rerun with CUDA_LAUNCH_BLOCKING=1 "
        "and compute-sanitizer; check dmesg for Xid 31/13 and, when it happens on one GPU "
        "only, for memory Xids (48, 94, 95).",
        rule_app_illegal_address},
    RuleInfo{"ecc.uncorrectable_reported", "app", S::kCritical,
             "Uncorrectable ECC error reported to the application",
             "The CUDA \"uncorrectable ECC error encountered\" message.",
             "Check the node's kernel log for Xid 48/63/64/94/95 and nvidia-smi -q -d "
             "ECC,PAGE_RETIREMENT,ROW_REMAPPER for the GPU; drain the node and reset the GPU (or "
             "reboot) so retirement/remapping takes effect; replace it if it recurs or remapping "
             "fails. Repeats on one node point at one faulty GPU there.",
             rule_app_uncorrectable_ecc},
    RuleInfo{"cuda.system_not_ready", "app", S::kCritical,
             "CUDA cannot start: system not yet initialized (802)",
             "cudaErrorSystemNotReady / CUDA_ERROR_SYSTEM_NOT_READY / \"Error 802: system not yet "
             "initialized\" in any wrapping.",
             "Start nvidia-fabricmanager of the driver's exact version (NVSwitch systems).",
             [](const DiagnoseContext& c, Findings& o) {
               rule_cuda_catalog(c, "cuda.system_not_ready", o);
             }},
    RuleInfo{"cuda.driver_setup", "app", S::kCritical,
             "The CUDA user-mode driver does not suit the kernel driver or the GPU",
             "Errors 803 (driver mismatch), 804 (forward compatibility on an unsupported GPU), "
             "34 (stub libcuda), 36 (call needs a newer driver); nvidia-smi's \"CUDA Version: "
             "ERR!\" (libcuda could not be loaded or queried).",
             "Reinstall one driver version; remove cuda-compat from the library path; upgrade.",
             [](const DiagnoseContext& c, Findings& o) {
               rule_cuda_catalog(c, "cuda.driver_setup", o);
               rule_cuda_version_unreadable(c, o);
             }},
    RuleInfo{
        "cuda.init_failed", "app", S::kWarning, "CUDA could not initialize",
        "Errors 3, 304, 221, 102, 103, 127 (initialization, OS call, JIT library, license, "
        "integrity, start-up).",
        "Check the driver, the container runtime, and CUDA use after fork().",
        [](const DiagnoseContext& c, Findings& o) { rule_cuda_catalog(c, "cuda.init_failed", o); }},
    RuleInfo{"cuda.device_unavailable", "app", S::kWarning,
             "The GPU is busy, exclusive, or its MPS server refused the client",
             "Errors 46, 216, 805, 807.",
             "nvidia-smi -q: Compute Mode and the processes on the GPU; the MPS daemon's log.",
             [](const DiagnoseContext& c, Findings& o) {
               rule_cuda_catalog(c, "cuda.device_unavailable", o);
             }},
    RuleInfo{"cuda.ptx_unsupported", "app", S::kWarning,
             "The program's GPU code does not run on this driver (PTX or kernel image)",
             "Errors 222 (PTX from a newer toolkit), 218, 223 (JIT failed or disabled), 98, 200.",
             "Upgrade the driver, or build for this GPU's architecture.",
             [](const DiagnoseContext& c, Findings& o) {
               rule_cuda_catalog(c, "cuda.ptx_unsupported", o);
             }},
    RuleInfo{"cuda.invalid_device", "app", S::kWarning,
             "The program asked for a GPU it cannot see (101)",
             "cudaErrorInvalidDevice / \"invalid device ordinal\".",
             "Compare the device number with CUDA_VISIBLE_DEVICES and the container's GPUs.",
             [](const DiagnoseContext& c, Findings& o) {
               rule_cuda_catalog(c, "cuda.invalid_device", o);
             }},
    RuleInfo{"cuda.nvlink_uncorrectable", "app", S::kCritical,
             "An uncorrectable NVLink error reached the application (220)",
             "cudaErrorNvlinkUncorrectable / CUDA_ERROR_NVLINK_UNCORRECTABLE.",
             "Check NVLink state and counters and Xid 74; service a link that keeps failing.",
             [](const DiagnoseContext& c, Findings& o) {
               rule_cuda_catalog(c, "cuda.nvlink_uncorrectable", o);
             }},
    RuleInfo{"cuda.unknown_error", "app", S::kWarning, "CUDA failed with an unknown error (999)",
             "cudaErrorUnknown / CUDA_ERROR_UNKNOWN / \"CUDA error: unknown error\"; an Xid or a "
             "GPU off the bus in the same capture is named as its cause.",
             "Reload nvidia_uvm or reboot; with an Xid, follow the Xid's action.",
             [](const DiagnoseContext& c, Findings& o) {
               rule_cuda_catalog(c, "cuda.unknown_error", o);
             }},
    RuleInfo{"cuda.kernel_fault", "app", S::kWarning,
             "A CUDA kernel faulted (timeout, stack, instruction or address)",
             "Errors 702, 714, 715, 716, 718; an Xid in the same capture is named.",
             "CUDA_LAUNCH_BLOCKING=1 and compute-sanitizer; a fault that follows one GPU points "
             "at the GPU.",
             [](const DiagnoseContext& c, Findings& o) {
               rule_cuda_catalog(c, "cuda.kernel_fault", o);
             }},
    RuleInfo{"app.cuda_error", "app", S::kWarning, "Other CUDA or driver error in the application",
             "A CUDA/driver error message no specific rule covers (shown, never dropped): info; "
             "a cuBLAS status (CUBLAS_STATUS_EXECUTION_FAILED, INTERNAL_ERROR, ...) is a "
             "warning naming the status, info for INVALID_VALUE (the program's argument).",
             "Look the error up in the CUDA runtime documentation; check dmesg for Xid lines at "
             "the same time.",
             rule_app_other_error},
    // ---- kernel log: driver messages, Xid follow-ups, PCIe lines (issue 7) ----
    RuleInfo{"xid.recovery_action", "kernel", S::kCritical,
             "Xid 154: the recovery action the driver now requires",
             "Xid 154 lines, graded by the announced value ('to 0xN'), not the label: 1 GPU "
             "reset, 2 node reboot, 3 drain P2P, 4 drain and reset, 5 IMEX recovery, 6 bus reset "
             "(PF FLR), 7 system reboot are critical; 0 (none) is info; names the Xid before it.",
             "Do what the value says: reset the GPU, reboot, or drain then reset.",
             rule_xid_recovery_action},
    RuleInfo{"xid.consequence", "kernel", S::kInfo,
             "Xid that follows another Xid (a consequence, not a separate fault)",
             "Xid 45 with 'caused by previous Xid N' or within 60 s after a non-informational Xid "
             "on the same GPU; Xid 137 within 60 s of an NVLink Xid on the same GPU and link. "
             "Solo Xid 45 is xid.application (a process was stopped). Info when the root's own "
             "line is in the log (the root has its finding); when only the follow-up names it, "
             "the finding stands for the root: warning, critical for a critical root.",
             "Act on the root Xid named in the finding; nothing to do for the follow-up itself.",
             rule_xid_consequence},
    RuleInfo{"driver.init_failed", "kernel", S::kCritical,
             "Driver could not initialise a GPU (RmInitAdapter failed)",
             "'RmInitAdapter failed' / 'rm_init_adapter failed' kernel lines, per GPU, with the "
             "driver's context lines (GSP firmware, assertions) around them.",
             "Reboot or power-cycle; check driver support for the GPU, power and seating, AER or "
             "Xid 79 before it; RMA if it persists. With the open-modules message: install those.",
             rule_driver_init_failed},
    RuleInfo{"driver.open_modules_required", "kernel", S::kCritical,
             "GPU needs the NVIDIA open kernel modules",
             "'requires use of the NVIDIA open kernel modules' (multi-line message joined), per "
             "GPU: a driver-install problem, not hardware.",
             "Install the open flavour of the same driver version (nvidia-driver-<branch>-open / "
             "nvidia-open, or .run -m=kernel-open) and reboot.",
             rule_driver_open_modules_required},
    RuleInfo{"driver.reset_required", "kernel", S::kCritical, "GPU needs a reset, with no Xid",
             "NV_ERR_RESET_REQUIRED, 'Reset required' assertions, 'GspRmAlloc failed', 'needs to "
             "be reset', 'Memory Subsystem Error detected' lines on a GPU that has no Xid in the "
             "log (with an Xid, that finding quotes them).",
             "Stop its jobs and reset the GPU (sudo nvidia-smi -r -i <gpu>) or reboot.",
             rule_driver_reset_required},
    RuleInfo{"driver.gsp_timeout", "kernel", S::kWarning, "GSP firmware heartbeat or RPC timed out",
             "'Heartbeat timed out' / 'GSP RM heartbeat timed out' lines per GPU, with the "
             "heartbeat counter, the time since the last beat and the assertions beside them; "
             "the driver's '_kgspLogRpcTimeout: *** GSP Timeout ***' report of an RPC the "
             "firmware did not answer.",
             "Update the driver and report it (nvidia-bug-report.sh); watch for Xid 119/154 or "
             "GPU loss; reset or reboot if the GPU stops answering.",
             rule_driver_gsp_timeout},
    RuleInfo{"driver.assertion", "kernel", S::kWarning,
             "The driver failed an internal check on a GPU with no other error",
             "nvAssertFailedNoLog / nvCheckFailedNoLog, 'Cannot initialize GSP firmware RM', "
             "kgspInitRm and GSP boot lines on a GPU (or naming none) where the log shows no "
             "Xid, reset request, GSP timeout or lost GPU (with one, that finding quotes them).",
             "A failed GSP start needs a GPU reset or a reboot; otherwise watch the GPU for Xids, "
             "update the driver and report it with nvidia-bug-report.sh.",
             rule_driver_assertion},
    RuleInfo{"driver.api_mismatch", "kernel", S::kCritical,
             "Driver user-space and kernel module versions differ (NVRM API mismatch)",
             "The multi-line 'NVRM: API mismatch: the client has the version X ... this kernel "
             "module has the version Y' message; names both versions and an application error "
             "the mismatch causes (NVML, nvidia-smi, the container hook), if one is in the "
             "inputs: the one finding for the mismatch.",
             "Reboot, or stop GPU processes and reload the nvidia modules; make sure the new "
             "module is built for the running kernel.",
             rule_driver_api_mismatch},
    RuleInfo{"driver.no_device_probed", "kernel", S::kCritical,
             "NVIDIA driver bound to no GPU (probe not called / failed, no adapter found)",
             "'The NVIDIA probe routine was not called for N device(s)' (another driver owns "
             "them; the candidates it names are listed), 'probe routine failed', 'No NVIDIA "
             "graphics adapter probed/found'. A failed probe after the same log's lost GPU or "
             "failed initialisation is info: that error is the cause.",
             "Find the driver bound to the GPUs (lspci -k), blacklist or unbind it (nouveau, "
             "vfio-pci), rebuild the initramfs and reload or reboot.",
             rule_driver_no_device_probed},
    RuleInfo{"driver.kernel_fault", "kernel", S::kCritical,
             "The NVIDIA driver crashed in the kernel (Oops/BUG in an NVIDIA module)",
             "A kernel fault report whose instruction pointer (RIP/IP/pc) is in an NVIDIA module "
             "(nvidia, nvidia_uvm, nvidia_modeset, nvidia_drm, ...; or an _nvNNNNNNrm function): "
             "its header (BUG:, Oops:, general protection fault, soft lockup), the function, the "
             "task; the trace frames and module list are read with it. Warning when the report's "
             "start is not in the input.",
             "Drain and reboot; update to the newest driver of the branch; send the whole report "
             "with nvidia-bug-report.sh if it persists.",
             rule_driver_kernel_fault},
    RuleInfo{"driver.kernel_warning", "kernel", S::kWarning,
             "The kernel warned about the NVIDIA driver (WARNING/UBSAN in an NVIDIA module)",
             "A kernel WARNING whose instruction pointer is in an NVIDIA module, or a UBSAN "
             "report in the driver's sources: the kernel went on.",
             "Not a crash: update the driver if GPU work failed then; report the trace.",
             rule_driver_kernel_warning},
    RuleInfo{"kernel.hung_task", "kernel", S::kWarning,
             "Tasks hung in the kernel (D state) next to GPU errors",
             "'INFO: task NAME:PID blocked for more than N seconds' within 10 minutes of a GPU "
             "error (Xid, fallen off the bus, init failure, reset required, GSP timeout): "
             "context of that fault (info); a warning when the only errors near are an "
             "application's Xids (13, 31, 43, 45): the teardown did not finish.",
             "Handle the GPU error; the tasks clear after the GPU reset or a reboot (drain the "
             "node while they last).",
             rule_kernel_hung_task},
    RuleInfo{"pcie.aer_errors", "kernel", S::kCritical,
             "PCIe AER errors on a GPU or its upstream port",
             "AER lines (native, or the firmware-first records of APEI/GHES) whose device is a "
             "GPU (or its audio function, or NVIDIA's vendor id in a firmware record), that name "
             "a GPU as the source, or a port's lines next to a GPU's; critical when fatal or "
             "unrecovered, warning when uncorrected, of unknown severity (a cut record) or 100+ "
             "corrected, info otherwise.",
             "Reseat the GPU and riser/cable, check slot and retimers, update the BIOS; drain "
             "and reboot after an unrecovered error.",
             rule_pcie_aer_errors},
    RuleInfo{"pcie.aer_port", "kernel", S::kWarning,
             "PCIe AER errors on a port whose device below is not named",
             "AER reports of a root or switch port (with their untagged detail lines and error "
             "bits) that no GPU line, no other device's line and no named source explain: the "
             "device below is not in the log. Warning when uncorrected or fatal (a Surprise "
             "Down is the link below going away), info for corrected errors repeated twice "
             "or more (a single one is not reported).",
             "Find the device below the port (lspci -tv); if it is a GPU, treat it as that GPU's "
             "link: reseat the GPU and riser/cable, check the slot, update the BIOS.",
             rule_pcie_aer_port},
    RuleInfo{"pcie.link_limited", "kernel", S::kWarning,
             "GPU's PCIe bandwidth limited by an upstream link",
             "The PCI core's boot line '<N> Gb/s available PCIe bandwidth, limited by <speed> "
             "<width> link at <port> (capable of <M> Gb/s ...)' for a GPU (any device when the "
             "inputs list no GPUs).",
             "Check the upstream port (lspci -vv: LnkCap/LnkSta); a slower switch/root port is a "
             "platform limit; otherwise check BIOS PCIe speed, risers, retimers.",
             rule_pcie_link_limited},
    // ---- active checks: doctor --stress, the measurement is the evidence (issue 18) ----
    RuleInfo{"active.copy_below_link", "active", S::kWarning,
             "Host-device copies far below what the GPU's PCIe link should carry",
             "Pinned-memory copies (either direction) below 60% of the per-direction payload "
             "figure of the link's maximum generation and width; says whether the link trained "
             "down (NVML right after the copies) or the loss is past the link.",
             "Reseat the GPU and its riser or cable, use an x16 slot wired for x16, set the "
             "slot's PCIe generation to Auto/maximum in the BIOS, then run doctor --stress again.",
             rule_active_copy_below_link},
    RuleInfo{"active.copy_below_peers", "active", S::kWarning,
             "Host-to-device copies slower than the same model's other GPUs",
             "Host-to-device GB/s below 75% of the median of the other GPUs of the same model "
             "(3+ measured), when the link itself does not explain it.",
             "Compare the GPU's slot, NUMA node and PCIe switch with its siblings (nvidia-smi "
             "topo -m, lspci -tv); check IOMMU settings; swap slots to tell slot from card.",
             rule_active_copy_below_peers},
    RuleInfo{"active.peer_access_missing", "active", S::kCritical,
             "No peer-to-peer access between two GPUs",
             "cuDeviceCanAccessPeer or cuCtxEnablePeerAccess refused for a pair: critical when "
             "both GPUs have active NVLinks (the path should be NVLink), warning under PCIe "
             "switches (topology PIX/PXB, where P2P normally works: ACS or the IOMMU), info "
             "through host bridges or across CPUs (PHB/NODE/SYS, often not routed).",
             "Check nvidia-smi nvlink -s and nvidia-smi topo -m; on NVSwitch systems check that "
             "nvidia-fabricmanager runs; over PCIe, check ACS and IOMMU settings.",
             rule_active_peer_access},
    RuleInfo{"active.peer_slow", "active", S::kWarning,
             "A GPU pair copies far slower than the other pairs on the same kind of path",
             "Peer copy GB/s below half the median of the pairs with the same expected path "
             "(NVLink, or the PCIe topology level PIX/PXB/PHB/NODE/SYS), 3+ pairs measured.",
             "Check that pair's NVLinks (nvidia-smi nvlink -s / -e) or PCIe path; reseat or "
             "replace the bridge or board if links are down or erroring.",
             rule_active_peer_slow},
    RuleInfo{"active.clock_drop", "active", S::kCritical,
             "Clock falls under sustained load and stays down",
             "During the load, the SM clock drops below 85% of the best clock of the load and "
             "stays there until the end; says when, at what temperature and power, and what the "
             "GPUs that held their clock read. Critical with an HW slowdown reason.",
             "Follow the reason named: for thermal, improve cooling (fans, airflow, dust, paste); "
             "for power, check the power limit and supply; retest with doctor --stress.",
             rule_active_clock_drop},
    RuleInfo{"active.gpu_lost", "active", S::kCritical, "GPU lost while under the test load",
             "A loaded GPU reads lost, reset required or in error in NVML during the load.",
             "Drain the node; check the kernel log for Xid 79 and PCIe errors; reseat the GPU and "
             "check its power cables; reset or reboot before returning it to service.",
             rule_active_gpu_lost},
    RuleInfo{"active.cuda_error", "active", S::kWarning,
             "A CUDA call failed on a GPU during the active check",
             "A CUDA driver call (allocation, copy, launch, synchronise) failed or ran past its "
             "deadline on a GPU that NVML still reads.",
             "Read the CUDA error named; check the kernel log for Xids; rerun the check alone on "
             "that GPU (--gpu N).",
             rule_active_cuda_error},
    RuleInfo{"active.refused", "active", S::kInfo, "GPU not loaded because it is in use",
             "A GPU listed other processes in NVML before the check and --force was not given.",
             "Run the check when the GPU is free, or pass --force to load it anyway.",
             rule_active_refused},
    RuleInfo{"active.stopped", "active", S::kWarning, "The test load stopped before its end",
             "The load ended before its duration: Ctrl-C, a GPU at its shutdown temperature, a GPU "
             "lost, NVML failing.",
             "Handle the reason named, then run doctor --stress again.", rule_active_stopped},
    RuleInfo{"active.not_run", "active", S::kWarning,
             "No test load was run: the CUDA driver could not be used",
             "doctor --stress could not open or initialise libcuda.so.1 (no driver, no device, "
             "init failed or hung).",
             "Check the NVIDIA driver (nvidia-smi); point --cuda-lib at libcuda.so.1 if it is "
             "installed outside the library path.",
             rule_active_not_run},
    // ---- DCGM tool output found in captures (dcgm.cpp, issue 19) ----
    RuleInfo{"dcgm.diag_fail", "dcgm", S::kCritical, "A DCGM diagnostic test failed on a GPU",
             "A `dcgmi diag` table (any level) shows Fail for a test on a GPU (or on all), or a "
             "deployment Error row; the failure text is dcgmi's own. A health report that says "
             "Healthy or a diag table without failures elsewhere in the capture is named in the "
             "evidence: the fault wins.",
             "Drain the GPU, check the kernel log for its Xids, reset it and rerun the "
             "diagnostic; a repeated hardware failure is an RMA case.",
             rule_dcgm_diag_fail},
    RuleInfo{"dcgm.diag_warn", "dcgm", S::kWarning, "A DCGM diagnostic test warned on a GPU",
             "A `dcgmi diag` result Warn for a test on a GPU, with its text.",
             "Fix what the text names (cooling, clocks, configuration) and rerun.",
             rule_dcgm_diag_warn},
    RuleInfo{"dcgm.diag_skipped", "dcgm", S::kInfo, "A DCGM diagnostic test was skipped",
             "A `dcgmi diag` result Skip: the test did not run, so it says nothing either way.",
             "Check DCGM's test configuration and rerun the test before trusting the GPU.",
             rule_dcgm_diag_skip},
    RuleInfo{"dcgm.health", "dcgm", S::kCritical, "DCGM's health watch reports an incident",
             "`dcgmi health -c` (JSON) with an overall status other than Healthy, or the host "
             "engine's \"[[Health]] Detected a WARNING/FAILURE in health system X\" log line; "
             "warning for Warning, critical for Failure.",
             "Follow the health system named (Thermal: cooling; Memory: ECC; PCIe: link).",
             rule_dcgm_health},
    RuleInfo{"dcgm.nvlink_down", "dcgm", S::kCritical, "NVLink links reported down",
             "The `dcgmi nvlink --link-status` grid shows links Down (D) for a GPU, or "
             "`nvidia-smi nvlink -s` lists some of its links <inactive> beside active ones, or "
             "every link inactive on a board whose GPUs always have NVLink (SXM, HBM3 H100, "
             "B200, GB200/GB300; a PCIe card with none active has no bridge): the count of links "
             "down of the links listed.",
             "Check bridges/baseboard and the fabric manager, reset the GPUs; vendor case if "
             "the links stay down.",
             rule_dcgm_nvlink_down},
    RuleInfo{"dcgm.xid", "dcgm", S::kCritical, "DCGM reads an Xid on a GPU",
             "`dcgmi dmon` field 230 (XIDER), or dcgm-exporter's DCGM_FI_DEV_XID_ERRORS, "
             "non-zero for a GPU.",
             "Look the Xid up; for GSP or uncontained errors drain and reset the GPU.",
             rule_dcgm_xid},
    // ---- DCGM's plain values: discovery, dmon fields, stats reports (dcgm_readings.cpp) ----
    RuleInfo{"dcgm.devices", "dcgm", S::kInfo, "The GPUs DCGM lists",
             "`dcgmi discovery -l`: each GPU's id, name, bus id and UUID, and the count DCGM "
             "printed (\"8 GPUs found\") when the capture shows fewer rows.",
             "Nothing to fix; compare with nvidia-smi -L.", rule_dcgm_devices},
    RuleInfo{"dcgm.name_unreadable", "dcgm", S::kWarning, "DCGM could not read a GPU's name",
             "`dcgmi discovery -l` shows Name <<<NULL>>> (or empty) for a GPU whose bus id is "
             "listed. For every GPU shown: one finding about DCGM on this node (its release or "
             "NVML library against the driver), never about a GPU; for some GPUs only: a "
             "finding per GPU.",
             "Run a DCGM release that supports this driver and GPU, with the driver's "
             "libnvidia-ml; for one GPU, check it with nvidia-smi -q.",
             rule_dcgm_name_unreadable},
    RuleInfo{"dcgm.nvlink_status", "dcgm", S::kInfo, "DCGM shows every NVLink Up",
             "The `dcgmi nvlink -s` grid with every supported link Up (U) for every GPU listed: "
             "the affirmative answer for the links; \"No NvSwitches found\" is said with what "
             "it means on a board that has them.",
             "Nothing to fix.", rule_dcgm_nvlink_status},
    RuleInfo{"dcgm.counter_errors", "dcgm", S::kCritical, "DCGM counts errors on a GPU",
             "A non-zero error counter in `dcgmi dmon` or dcgm-exporter's series (any field the "
             "field table marks as "
             "errors: uncorrectable ECC, row-remap failure, retired or pending pages, PCIe "
             "replays, NVLink CRC/replay/recovery/receive errors; corrected ECC errors above "
             "50 million), in `dcgmi nvlink -e` or "
             "`nvidia-smi nvlink -e` per link, or in a `dcgmi stats` report "
             "(double-bit ECC, PCIe replay warnings, critical Xids). Critical for uncorrectable "
             "memory errors and Xids, warning for the rest. N/A is never an error.",
             "Drain and reset the GPU for uncorrectable errors; watch link counters for growth.",
             rule_dcgm_counter_errors},
    RuleInfo{"dcgm.nvlink_counters", "dcgm", S::kInfo, "A GPU's NVLink error counters are all 0",
             "Every NVLink error counter read for a GPU (`dcgmi dmon` fields, dcgm-exporter "
             "series, `dcgmi nvlink -e` per link) is 0; with the traffic fields above zero it "
             "says the links carry traffic without error: the affirmative answer for its links.",
             "Nothing to fix.", rule_dcgm_nvlink_counters},
    RuleInfo{"dcgm.fields_unavailable", "dcgm", S::kInfo,
             "DCGM returned no value for the fields watched",
             "A `dcgmi dmon` table whose fields read N/A in every row for every GPU: a "
             "collection gap (a field combination DCGM cannot serve, MIG, permissions), said "
             "as such so that it is never taken for a reading.",
             "Watch the fields in separate runs to find the one that blocks the others.",
             rule_dcgm_fields_unavailable},
    RuleInfo{"dcgm.stats_empty", "dcgm", S::kInfo, "A DCGM job report recorded nothing",
             "`dcgmi stats -j` with no process and no energy, power or memory over the job: "
             "the watches collected nothing, so the job's GPU use is unknown (not zero).",
             "Start job stats before the job on a group with its GPUs (`dcgmi stats -e`, "
             "`-s`, `-x`).",
             rule_dcgm_stats_empty},
    RuleInfo{"dcgm.stats_slowdown", "dcgm", S::kWarning,
             "A job spent part of its time with clocks held down",
             "A `dcgmi stats` report's slowdown share (power, thermal, reliability, board "
             "limit, sync boost) of 5 % or more of the job's time.",
             "Fix the cause named: cooling for thermal, the power limit or supply for power.",
             rule_dcgm_stats_slowdown},
};

}  // namespace

std::span<const RuleInfo> rule_registry() {
  return kRules;
}

const RuleInfo* find_rule(std::string_view code) {
  const auto it = std::find_if(kRules.begin(), kRules.end(),
                               [code](const RuleInfo& r) { return r.code == code; });
  return it == kRules.end() ? nullptr : &*it;
}

}  // namespace gw
