#include "core/snapshot.h"

#include <string>

namespace gw {

std::string_view gpu_access_name(GpuAccess a) {
  switch (a) {
    case GpuAccess::kOk:
      return "ok";
    case GpuAccess::kLost:
      return "lost";
    case GpuAccess::kResetRequired:
      return "reset_required";
    case GpuAccess::kHung:
      return "hung";
    case GpuAccess::kNoPermission:
      return "no_permission";
    case GpuAccess::kError:
      return "error";
  }
  return "error";
}

std::string_view fabric_state_name(FabricState s) {
  switch (s) {
    case FabricState::kNotSupported:
      return "Not Supported";
    case FabricState::kNotStarted:
      return "Not Started";
    case FabricState::kInProgress:
      return "In Progress";
    case FabricState::kCompleted:
      return "Completed";
  }
  return "Not Supported";
}

std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace gw
