// The fake's NVML idioms, called directly: string buffers, versioned structs, size queries.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <array>

#include "fake_support.h"
#include "sources/nvml/nvml_types.h"

namespace gw::nvml::test {
namespace {

template <class F>
F sym(void* h, const char* name) {
  return reinterpret_cast<F>(dlsym(h, name));
}

class FakeExports : public ::testing::Test {
 protected:
  void SetUp() override {
    h_ = dlopen(fake_lib().c_str(), RTLD_LAZY | RTLD_LOCAL);
    ASSERT_NE(h_, nullptr) << dlerror();
    ASSERT_EQ(sym<int (*)(const char*)>(
                  h_, "gwfake_load_scenario")(scenario("consumer-rtx4090.json").c_str()),
              0);
    ASSERT_EQ(sym<int (*)(unsigned, nvmlDevice_t*)>(h_, "nvmlDeviceGetHandleByIndex_v2")(0, &dev_),
              kUninitialized);
    ASSERT_EQ(sym<int (*)()>(h_, "nvmlInit_v2")(), kSuccess);
    ASSERT_EQ(sym<int (*)(unsigned, nvmlDevice_t*)>(h_, "nvmlDeviceGetHandleByIndex_v2")(0, &dev_),
              kSuccess);
  }
  void TearDown() override {
    if (h_ != nullptr) {
      sym<int (*)()>(h_, "nvmlShutdown")();
      dlclose(h_);
    }
  }
  void* h_ = nullptr;
  nvmlDevice_t dev_ = nullptr;
};

TEST_F(FakeExports, StringBufferTooSmallIsInsufficientSize) {
  auto name = sym<int (*)(nvmlDevice_t, char*, unsigned)>(h_, "nvmlDeviceGetName");
  std::array<char, 96> buf{};
  EXPECT_EQ(name(dev_, buf.data(), 8), kInsufficientSize);
  EXPECT_EQ(name(dev_, buf.data(), 96), kSuccess);
  EXPECT_STREQ(buf.data(), "NVIDIA GeForce RTX 4090");
  auto serial = sym<int (*)(nvmlDevice_t, char*, unsigned)>(h_, "nvmlDeviceGetSerial");
  EXPECT_EQ(serial(dev_, buf.data(), 30), kNotSupported);
}

TEST_F(FakeExports, VersionedStructIsChecked) {
  auto mem = sym<int (*)(nvmlDevice_t, nvmlMemory_v2_t*)>(h_, "nvmlDeviceGetMemoryInfo_v2");
  nvmlMemory_v2_t m{};
  m.version = 0x01000028;
  EXPECT_EQ(mem(dev_, &m), kArgumentVersionMismatch);
  m.version = kMemoryV2Version;
  ASSERT_EQ(mem(dev_, &m), kSuccess);
  EXPECT_EQ(m.total, m.used + m.free + m.reserved);
}

TEST_F(FakeExports, ProcessListSizeQuery) {
  auto procs = sym<int (*)(nvmlDevice_t, unsigned*, nvmlProcessInfo_t*)>(
      h_, "nvmlDeviceGetComputeRunningProcesses_v3");
  unsigned n = 0;
  EXPECT_EQ(procs(dev_, &n, nullptr), kInsufficientSize);
  EXPECT_EQ(n, 1u);
  std::array<nvmlProcessInfo_t, 4> info{};
  n = 4;
  ASSERT_EQ(procs(dev_, &n, info.data()), kSuccess);
  EXPECT_EQ(n, 1u);
  EXPECT_EQ(info[0].pid, 9120u);
  EXPECT_EQ(info[0].gpuInstanceId, 0xFFFFFFFFu);
}

TEST_F(FakeExports, UnsupportedAndBadHandles) {
  auto ecc = sym<int (*)(nvmlDevice_t, int*, int*)>(h_, "nvmlDeviceGetEccMode");
  int a = 0, b = 0;
  EXPECT_EQ(ecc(dev_, &a, &b), kNotSupported);
  EXPECT_EQ(ecc(nullptr, &a, &b), kInvalidArgument);
  auto link = sym<int (*)(nvmlDevice_t, unsigned, int*)>(h_, "nvmlDeviceGetNvLinkState");
  EXPECT_EQ(link(dev_, 0, &a), kNotSupported);
  auto err = sym<const char* (*)(int)>(h_, "nvmlErrorString");
  EXPECT_STREQ(err(kGpuIsLost), "GPU is lost");
  EXPECT_STREQ(err(12345), "Unknown Error");
}

}  // namespace
}  // namespace gw::nvml::test
