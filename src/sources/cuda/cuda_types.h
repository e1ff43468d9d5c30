// The few CUDA driver API types and constants gpuwarden uses, written from NVIDIA's public
// driver API reference (CUDA Driver API, "Data types used by CUDA driver"), so that nothing
// needs cuda.h or the CUDA toolkit at build time. Values are the ABI: never renumber.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gw::cuda {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // 64-bit builds only (the only ones the driver ships)
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
struct CUuuid {
  char bytes[16];
};

// CUresult values (cudaError_enum).
inline constexpr CUresult kSuccess = 0;
inline constexpr CUresult kInvalidValue = 1;
inline constexpr CUresult kOutOfMemory = 2;
inline constexpr CUresult kNotInitialized = 3;
inline constexpr CUresult kDeinitialized = 4;
inline constexpr CUresult kNoDevice = 100;
inline constexpr CUresult kInvalidDevice = 101;
inline constexpr CUresult kInvalidImage = 200;
inline constexpr CUresult kInvalidContext = 201;
inline constexpr CUresult kEccUncorrectable = 214;
inline constexpr CUresult kPeerAccessUnsupported = 217;
inline constexpr CUresult kInvalidPtx = 218;
inline constexpr CUresult kInvalidHandle = 400;
inline constexpr CUresult kNotFound = 500;
inline constexpr CUresult kNotReady = 600;
inline constexpr CUresult kIllegalAddress = 700;
inline constexpr CUresult kPeerAccessAlreadyEnabled = 704;
inline constexpr CUresult kPeerAccessNotEnabled = 705;
inline constexpr CUresult kLaunchFailed = 719;
inline constexpr CUresult kUnknown = 999;

// CUdevice_attribute values.
inline constexpr int kAttrMultiprocessorCount = 16;
inline constexpr int kAttrPciBusId = 33;
inline constexpr int kAttrPciDeviceId = 34;
inline constexpr int kAttrPciDomainId = 50;
inline constexpr int kAttrComputeCapabilityMajor = 75;
inline constexpr int kAttrComputeCapabilityMinor = 76;

inline constexpr unsigned kMemHostAllocPortable = 0x01;  // CU_MEMHOSTALLOC_PORTABLE
inline constexpr unsigned kStreamNonBlocking = 0x1;      // CU_STREAM_NON_BLOCKING
inline constexpr unsigned kEventDefault = 0x0;           // CU_EVENT_DEFAULT (timing on)

}  // namespace gw::cuda
