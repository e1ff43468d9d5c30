// NVML types, declared by hand from docs/../reference (no NVIDIA header at build time). The
// fake NVML includes this same file, and the static_asserts pin the x86_64 layouts the real
// driver uses, so a drift in either side fails the build.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" {

typedef int nvmlReturn_t;  // a C enum: 4 bytes
typedef struct nvmlDevice_st* nvmlDevice_t;

struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];
};

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlMemory_v2_t {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlUtilization_t {
  unsigned int gpu;
  unsigned int memory;
};

struct nvmlProcessInfo_v1_t {
  unsigned int pid;
  unsigned long long usedGpuMemory;
};

struct nvmlProcessInfo_t {  // = nvmlProcessInfo_v2_t, used by the _v2 and _v3 exports
  unsigned int pid;
  unsigned long long usedGpuMemory;
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

struct nvmlViolationTime_t {
  unsigned long long referenceTime;  // µs
  unsigned long long violationTime;  // ns
};

union nvmlValue_t {
  double dVal;
  int siVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  unsigned short usVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;
  unsigned int scopeId;
  long long timestamp;
  long long latencyUsec;
  int valueType;  // nvmlValueType_t
  nvmlReturn_t nvmlReturn;
  nvmlValue_t value;
};

typedef struct nvmlEventSet_st* nvmlEventSet_t;

struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;  // one bit of the registered mask
  unsigned long long eventData;  // the Xid for Xid events (999 = unknown Xid), else 0
  unsigned int gpuInstanceId;    // 0xFFFFFFFF when not MIG-attributable
  unsigned int computeInstanceId;
};

// GPM (nvml.h of driver 520+; layouts as in NVIDIA's header). The metrics array is sized for
// the largest NVML_GPM_METRIC_MAX a header has used (333): a driver reads numMetrics entries.
typedef struct nvmlGpmSample_st* nvmlGpmSample_t;

struct nvmlGpmMetric_t {
  unsigned int metricId;    // in
  nvmlReturn_t nvmlReturn;  // out: per metric
  double value;             // out: valid when nvmlReturn is SUCCESS
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;  // out: may be null
};

struct nvmlGpmMetricsGet_t {
  unsigned int version;  // NVML_GPM_METRICS_GET_VERSION (1)
  unsigned int numMetrics;
  nvmlGpmSample_t sample1;
  nvmlGpmSample_t sample2;
  nvmlGpmMetric_t metrics[333];
};

struct nvmlGpmSupport_t {
  unsigned int version;  // NVML_GPM_SUPPORT_VERSION (1)
  unsigned int isSupportedDevice;
};

}  // extern "C"

static_assert(sizeof(nvmlGpmMetric_t) == 40 && offsetof(nvmlGpmMetric_t, value) == 8 &&
              offsetof(nvmlGpmMetric_t, metricInfo) == 16);
static_assert(offsetof(nvmlGpmMetricsGet_t, sample1) == 8 &&
              offsetof(nvmlGpmMetricsGet_t, metrics) == 24);
static_assert(sizeof(nvmlGpmSupport_t) == 8);

static_assert(sizeof(nvmlEventData_t) == 32 && offsetof(nvmlEventData_t, eventData) == 16 &&
              offsetof(nvmlEventData_t, gpuInstanceId) == 24);
static_assert(sizeof(nvmlPciInfo_t) == 68 && offsetof(nvmlPciInfo_t, busId) == 36);
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40 && offsetof(nvmlMemory_v2_t, total) == 8 &&
              offsetof(nvmlMemory_v2_t, used) == 32);
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);
static_assert(sizeof(nvmlProcessInfo_t) == 24 && offsetof(nvmlProcessInfo_t, gpuInstanceId) == 16);
static_assert(sizeof(nvmlViolationTime_t) == 16);
static_assert(sizeof(nvmlFieldValue_t) == 40 && offsetof(nvmlFieldValue_t, nvmlReturn) == 28 &&
              offsetof(nvmlFieldValue_t, value) == 32);

namespace gw::nvml {

// nvmlReturn_t values we branch on (reference §2). Always branch on these, never on text.
enum Ret : int {
  kSuccess = 0,
  kUninitialized = 1,
  kInvalidArgument = 2,
  kNotSupported = 3,
  kNoPermission = 4,
  kNotFound = 6,
  kInsufficientSize = 7,
  kInsufficientPower = 8,
  kDriverNotLoaded = 9,
  kTimeout = 10,
  kLibraryNotFound = 12,
  kFunctionNotFound = 13,
  kGpuIsLost = 15,
  kResetRequired = 16,
  kLibRmVersionMismatch = 18,
  kArgumentVersionMismatch = 25,
  kGpuNotFound = 28,
  kUnknown = 999,
};

// NVSwitch fabric registration: nvmlGpuFabricInfo_t (R525+, unversioned) and the v2 struct of
// nvmlDeviceGetGpuFabricInfoV (R550+). `state` is nvmlGpuFabricState_t (uchar): not supported 0,
// not started 1, in progress 2, completed 3; `status` matters only once completed.
inline constexpr unsigned kFabricUuidLen = 16;
struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[kFabricUuidLen];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
};
struct nvmlGpuFabricInfo_v2_t {
  unsigned int version;
  unsigned char clusterUuid[kFabricUuidLen];
  nvmlReturn_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
};
inline constexpr unsigned kFabricInfoV2Version = 0x02000024;  // sizeof 36 | 2 << 24
static_assert(kFabricInfoV2Version == (sizeof(nvmlGpuFabricInfo_v2_t) | (2u << 24)));
static_assert(sizeof(nvmlGpuFabricInfo_t) == 28);

inline constexpr unsigned kMemoryV2Version = 0x02000028;  // sizeof 40 | 2 << 24
static_assert(kMemoryV2Version == (sizeof(nvmlMemory_v2_t) | (2u << 24)));

inline constexpr unsigned kNameBufferSize = 96;
inline constexpr unsigned kUuidBufferSize = 96;
inline constexpr unsigned kSerialBufferSize = 30;
inline constexpr unsigned kVersionBufferSize = 80;
inline constexpr unsigned kVbiosBufferSize = 32;
inline constexpr unsigned kProcessNameBufferSize = 256;
inline constexpr unsigned kNvLinkMaxLinks = 18;  // NVML 12.x
inline constexpr unsigned long long kValueNotAvailable = ~0ull;

// Enum values used by the reads.
enum ClockType : int { kClockGraphics = 0, kClockSm = 1, kClockMem = 2 };
enum TempThreshold : int {
  kThreshShutdown = 0,
  kThreshSlowdown = 1,
  kThreshMemMax = 2,
  kThreshGpuMax = 3
};
enum PerfPolicy : int {
  kPolicyPower = 0,
  kPolicyThermal = 1,
  kPolicySyncBoost = 2,
  kPolicyBoardLimit = 3,
  kPolicyReliability = 5
};
enum MemoryErrorType : int { kCorrected = 0, kUncorrected = 1 };
enum EccCounterType : int { kVolatile = 0, kAggregate = 1 };
enum RetirementCause : int { kMultipleSbe = 0, kDbe = 1 };
enum PcieCounter : int { kPcieTx = 0, kPcieRx = 1 };
enum NvLinkCounter : int { kDlReplay = 0, kDlRecovery = 1, kDlCrcFlit = 2, kDlCrcData = 3 };
enum ValueType : int {
  kValDouble = 0,
  kValUint = 1,
  kValUlong = 2,
  kValUll = 3,
  kValSll = 4,
  kValSint = 5
};

// Event type bits for nvmlDeviceRegisterEvents (reference §4.17).
inline constexpr unsigned long long kEventSingleBitEcc = 0x1;
inline constexpr unsigned long long kEventDoubleBitEcc = 0x2;
inline constexpr unsigned long long kEventXidCritical = 0x8;

// GPM (reference: nvmlGpmMetricId_t; both struct versions are 1).
inline constexpr unsigned kGpmMetricsGetVersion = 1;
inline constexpr unsigned kGpmSupportVersion = 1;
enum GpmMetricId : unsigned {
  kGpmGraphicsUtil = 1,
  kGpmSmUtil = 2,
  kGpmSmOccupancy = 3,
  kGpmAnyTensorUtil = 5,
  kGpmDramBwUtil = 10,
  kGpmFp64Util = 11,
  kGpmFp32Util = 12,
  kGpmFp16Util = 13,
};

// Field ids for nvmlDeviceGetFieldValues (reference §7).
enum FieldId : unsigned {
  kFiMemoryTemp = 82,
  kFiSwThermalNs = 269,
  kFiHwThermalNs = 270,
  kFiHwPowerBrakeNs = 271,
};

// nvmlGpuTopologyLevel_t (nvmlDeviceGetTopologyCommonAncestor) and the words `nvidia-smi topo -m`
// prints for each: the closest PCIe ancestor two GPUs share.
struct TopologyLevel {
  int level;
  const char* word;
};
inline constexpr TopologyLevel kTopologyLevels[] = {
    {0, "X"},      // NVML_TOPOLOGY_INTERNAL: the same board (or the same GPU)
    {10, "PIX"},   // NVML_TOPOLOGY_SINGLE: one PCIe switch
    {20, "PXB"},   // NVML_TOPOLOGY_MULTIPLE: several PCIe switches, no host bridge
    {30, "PHB"},   // NVML_TOPOLOGY_HOSTBRIDGE: a PCIe host bridge (the CPU's root complex)
    {40, "NODE"},  // NVML_TOPOLOGY_NODE: host bridges within one NUMA node
    {50, "SYS"},   // NVML_TOPOLOGY_SYSTEM: across NUMA nodes (the CPUs' interconnect)
};
inline const char* topology_word(int level) {
  for (const TopologyLevel& t : kTopologyLevels)
    if (t.level == level) return t.word;
  return nullptr;
}
inline int topology_level(std::string_view word) {
  for (const TopologyLevel& t : kTopologyLevels)
    if (word == t.word) return t.level;
  return -1;
}

}  // namespace gw::nvml
