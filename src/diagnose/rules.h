// The rule functions, one file per area. Each appends zero or more Findings with its code;
// registry.cpp lists them all in one table.
#pragma once

#include <string_view>
#include <vector>

#include "core/finding.h"

namespace gw {

struct DiagnoseContext;
using Findings = std::vector<Finding>;

// thermal.cpp
void rule_thermal_near_slowdown(const DiagnoseContext& c, Findings& out);
void rule_thermal_sw_slowdown(const DiagnoseContext& c, Findings& out);
void rule_thermal_hw_slowdown(const DiagnoseContext& c, Findings& out);
void rule_thermal_hotter_than_peers(const DiagnoseContext& c, Findings& out);
void rule_thermal_uneven(const DiagnoseContext& c, Findings& out);
void rule_thermal_fan_max_hot(const DiagnoseContext& c, Findings& out);
void rule_clocks_low_under_load(const DiagnoseContext& c, Findings& out);
void rule_clocks_unknown_reason(const DiagnoseContext& c, Findings& out);
void rule_clocks_reason_history(const DiagnoseContext& c, Findings& out);
// power.cpp
void rule_power_hw_brake(const DiagnoseContext& c, Findings& out);
void rule_power_hw_slowdown(const DiagnoseContext& c, Findings& out);
void rule_power_sw_cap(const DiagnoseContext& c, Findings& out);
void rule_power_sw_cap_idle(const DiagnoseContext& c, Findings& out);
void rule_power_limit_below_default(const DiagnoseContext& c, Findings& out);
void rule_power_cap_history(const DiagnoseContext& c, Findings& out);
// memory.cpp
void rule_memory_near_full(const DiagnoseContext& c, Findings& out);
void rule_memory_held_by_idle(const DiagnoseContext& c, Findings& out);
// pcie.cpp
void rule_pcie_gen_below_max(const DiagnoseContext& c, Findings& out);
void rule_pcie_width_below_max(const DiagnoseContext& c, Findings& out);
void rule_pcie_host_limited(const DiagnoseContext& c, Findings& out);
void rule_pcie_link_facts(const DiagnoseContext& c, Findings& out);
void rule_pcie_replays_rising(const DiagnoseContext& c, Findings& out);
void rule_pcie_cross_socket(const DiagnoseContext& c, Findings& out);
void rule_topology_gpus_via_host(const DiagnoseContext& c, Findings& out);
void rule_topology_nics_far(const DiagnoseContext& c, Findings& out);
// driver.cpp (driver, CUDA, configuration)
void rule_driver_version_mismatch(const DiagnoseContext& c, Findings& out);
void rule_driver_no_gpu(const DiagnoseContext& c, Findings& out);
void rule_driver_gpus_missing(const DiagnoseContext& c, Findings& out);
void rule_cuda_driver_too_old(const DiagnoseContext& c, Findings& out);
void rule_cuda_minor_compat(const DiagnoseContext& c, Findings& out);
void rule_cuda_compatible(const DiagnoseContext& c, Findings& out);
void rule_config_persistence_off(const DiagnoseContext& c, Findings& out);
void rule_config_app_clocks_lowered(const DiagnoseContext& c, Findings& out);
void rule_config_mig_enabled(const DiagnoseContext& c, Findings& out);
void rule_config_compute_mode(const DiagnoseContext& c, Findings& out);
// dcgm.cpp (what DCGM's tools said)
void rule_dcgm_diag_fail(const DiagnoseContext& c, Findings& out);
void rule_dcgm_diag_warn(const DiagnoseContext& c, Findings& out);
void rule_dcgm_diag_skip(const DiagnoseContext& c, Findings& out);
void rule_dcgm_health(const DiagnoseContext& c, Findings& out);
void rule_dcgm_nvlink_down(const DiagnoseContext& c, Findings& out);
void rule_dcgm_xid(const DiagnoseContext& c, Findings& out);
void rule_dcgm_devices(const DiagnoseContext& c, Findings& out);
void rule_dcgm_name_unreadable(const DiagnoseContext& c, Findings& out);
void rule_dcgm_nvlink_status(const DiagnoseContext& c, Findings& out);
void rule_dcgm_counter_errors(const DiagnoseContext& c, Findings& out);
void rule_dcgm_nvlink_counters(const DiagnoseContext& c, Findings& out);
void rule_dcgm_fields_unavailable(const DiagnoseContext& c, Findings& out);
void rule_dcgm_stats_empty(const DiagnoseContext& c, Findings& out);
void rule_dcgm_stats_slowdown(const DiagnoseContext& c, Findings& out);
// ecc.cpp
void rule_ecc_dbe_volatile(const DiagnoseContext& c, Findings& out);
void rule_ecc_retired_pages_limit(const DiagnoseContext& c, Findings& out);
void rule_ecc_retirement_pending(const DiagnoseContext& c, Findings& out);
void rule_ecc_row_remap_pending(const DiagnoseContext& c, Findings& out);
void rule_ecc_row_remap_failure(const DiagnoseContext& c, Findings& out);
void rule_ecc_uncorrectable_lifetime(const DiagnoseContext& c, Findings& out);
// xid.cpp (kernel log and GPU access)
void rule_xid_application(const DiagnoseContext& c, Findings& out);
void rule_xid_driver(const DiagnoseContext& c, Findings& out);
void rule_xid_hardware(const DiagnoseContext& c, Findings& out);
void rule_xid_memory(const DiagnoseContext& c, Findings& out);
void rule_xid_nvlink(const DiagnoseContext& c, Findings& out);
void rule_xid_thermal_power(const DiagnoseContext& c, Findings& out);
void rule_xid_other(const DiagnoseContext& c, Findings& out);
void rule_xid_recovery_action(const DiagnoseContext& c, Findings& out);
void rule_xid_consequence(const DiagnoseContext& c, Findings& out);
void rule_nvswitch_sxid(const DiagnoseContext& c, Findings& out);
void rule_gpu_fallen_off_bus(const DiagnoseContext& c, Findings& out);
void rule_gpu_hung(const DiagnoseContext& c, Findings& out);
void rule_gpu_reset_required(const DiagnoseContext& c, Findings& out);
// fabric.cpp
void rule_gpu_fabric_not_ready(const DiagnoseContext& c, Findings& out);
void rule_gpu_fabric_error(const DiagnoseContext& c, Findings& out);
void rule_gpu_fabric_unhealthy(const DiagnoseContext& c, Findings& out);
void rule_fabricmanager_failed(const DiagnoseContext& c, Findings& out);
void rule_fabricmanager_running(const DiagnoseContext& c, Findings& out);
void rule_fabricmanager_nvswitch_error(const DiagnoseContext& c, Findings& out);
void rule_gpu_access_error(const DiagnoseContext& c, Findings& out);
void rule_gpu_reading_failed(const DiagnoseContext& c, Findings& out);
// driver_events.cpp (kernel-log driver messages that are not Xids)
void rule_driver_init_failed(const DiagnoseContext& c, Findings& out);
void rule_driver_open_modules_required(const DiagnoseContext& c, Findings& out);
void rule_driver_reset_required(const DiagnoseContext& c, Findings& out);
void rule_driver_gsp_timeout(const DiagnoseContext& c, Findings& out);
void rule_driver_assertion(const DiagnoseContext& c, Findings& out);
void rule_driver_kernel_fault(const DiagnoseContext& c, Findings& out);
void rule_driver_kernel_warning(const DiagnoseContext& c, Findings& out);
void rule_driver_api_mismatch(const DiagnoseContext& c, Findings& out);
void rule_driver_no_device_probed(const DiagnoseContext& c, Findings& out);
void rule_kernel_hung_task(const DiagnoseContext& c, Findings& out);
// kernel_pcie.cpp (PCIe lines of the kernel log)
void rule_pcie_aer_errors(const DiagnoseContext& c, Findings& out);
void rule_pcie_aer_port(const DiagnoseContext& c, Findings& out);
void rule_pcie_link_limited(const DiagnoseContext& c, Findings& out);
// utilization.cpp
void rule_util_input_cpu_bound(const DiagnoseContext& c, Findings& out);
void rule_util_storage_bound(const DiagnoseContext& c, Findings& out);
void rule_util_transfer_bound(const DiagnoseContext& c, Findings& out);
void rule_util_low(const DiagnoseContext& c, Findings& out);
void rule_util_video_engine(const DiagnoseContext& c, Findings& out);
// app_errors.cpp (application and tool errors in captures)
void rule_app_cuda_oom(const DiagnoseContext& c, Findings& out);
void rule_app_nccl_error(const DiagnoseContext& c, Findings& out);
void rule_app_nccl_timeout(const DiagnoseContext& c, Findings& out);
void rule_app_nccl_desync(const DiagnoseContext& c, Findings& out);
void rule_app_peer_access(const DiagnoseContext& c, Findings& out);
void rule_app_driver_insufficient(const DiagnoseContext& c, Findings& out);
void rule_app_no_cuda_device(const DiagnoseContext& c, Findings& out);
void rule_app_smi_no_driver(const DiagnoseContext& c, Findings& out);
void rule_app_no_device_handle(const DiagnoseContext& c, Findings& out);
void rule_app_docker_no_gpu(const DiagnoseContext& c, Findings& out);
void rule_app_nvml_init_failed(const DiagnoseContext& c, Findings& out);
void rule_app_windows_driver_event(const DiagnoseContext& c, Findings& out);
void rule_slurm_gpu_count_low(const DiagnoseContext& c, Findings& out);
void rule_slurm_gres_device_missing(const DiagnoseContext& c, Findings& out);
// container.cpp: device plugin, Kubernetes node and admission, container toolkit hook.
void rule_container_device_unhealthy(const DiagnoseContext& c, Findings& out);
void rule_container_plugin_no_devices(const DiagnoseContext& c, Findings& out);
void rule_container_admission_failed(const DiagnoseContext& c, Findings& out);
void rule_container_hook_failed(const DiagnoseContext& c, Findings& out);
void rule_container_gpu_operator_not_ready(const DiagnoseContext& c, Findings& out);
void rule_container_gpu_unschedulable(const DiagnoseContext& c, Findings& out);
void rule_nccltests_busbw_low(const DiagnoseContext& c, Findings& out);
// The CUDA error catalog's rows: the findings of one code (diagnose/cuda_errors.cpp).
void rule_cuda_catalog(const DiagnoseContext& c, std::string_view only, Findings& out);
// nvidia-smi's "CUDA Version: ERR!" (libcuda unusable), under cuda.driver_setup.
void rule_cuda_version_unreadable(const DiagnoseContext& c, Findings& out);
void rule_nccl_topology(const DiagnoseContext& c, Findings& out);
void rule_topology_nvlink_groups(const DiagnoseContext& c, Findings& out);
// arch.cpp: a framework built without the GPU's architecture.
void rule_cuda_arch_unsupported(const DiagnoseContext& c, Findings& out);
void rule_app_launch_failure(const DiagnoseContext& c, Findings& out);
void rule_app_illegal_address(const DiagnoseContext& c, Findings& out);
void rule_app_uncorrectable_ecc(const DiagnoseContext& c, Findings& out);
void rule_app_other_error(const DiagnoseContext& c, Findings& out);
// training.cpp: a training log's step timing (share of the time spent waiting for data).
void rule_training_input_starved(const DiagnoseContext& c, Findings& out);
void rule_training_input_ok(const DiagnoseContext& c, Findings& out);
// bench.cpp: gpu_burn and nccl-tests output.
void rule_burn_faulty(const DiagnoseContext& c, Findings& out);
void rule_burn_died(const DiagnoseContext& c, Findings& out);
void rule_burn_hotter_than_peer(const DiagnoseContext& c, Findings& out);
void rule_burn_no_work(const DiagnoseContext& c, Findings& out);
void rule_burn_ok(const DiagnoseContext& c, Findings& out);
void rule_nccltests_busbw_drop(const DiagnoseContext& c, Findings& out);
void rule_nccltests_busbw(const DiagnoseContext& c, Findings& out);
void rule_p2p_enabled_slower(const DiagnoseContext& c, Findings& out);
void rule_p2p_pair_slow(const DiagnoseContext& c, Findings& out);
void rule_host_copy_uneven(const DiagnoseContext& c, Findings& out);
void rule_p2p_no_access(const DiagnoseContext& c, Findings& out);
// nccl_transport.cpp: NCCL_DEBUG=INFO transport choices.
void rule_nccl_transport_socket(const DiagnoseContext& c, Findings& out);
void rule_nccl_transport_info(const DiagnoseContext& c, Findings& out);
void rule_nccl_settings(const DiagnoseContext& c, Findings& out);
void rule_nccl_network_mismatch(const DiagnoseContext& c, Findings& out);
// active.cpp, active_load.cpp (what doctor --stress measured)
void rule_active_copy_below_link(const DiagnoseContext& c, Findings& out);
void rule_active_copy_below_peers(const DiagnoseContext& c, Findings& out);
void rule_active_peer_access(const DiagnoseContext& c, Findings& out);
void rule_active_peer_slow(const DiagnoseContext& c, Findings& out);
void rule_active_clock_drop(const DiagnoseContext& c, Findings& out);
void rule_active_gpu_lost(const DiagnoseContext& c, Findings& out);
void rule_active_cuda_error(const DiagnoseContext& c, Findings& out);
void rule_active_refused(const DiagnoseContext& c, Findings& out);
void rule_active_stopped(const DiagnoseContext& c, Findings& out);
void rule_active_not_run(const DiagnoseContext& c, Findings& out);

}  // namespace gw
