// The CUDA error catalog (sources/app/cuda_errors.h) and how lines name its errors (issue 19:
// the whole enum, by code or text). Inputs: the catalog itself, the shapes programs print
// (captures 327-332 and the wordings of PyTorch, THC, helper_cuda, XLA, deviceQuery), with the
// class transformations.
#include "sources/app/cuda_errors.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fixture_util.h"
#include "sources/captures.h"

namespace gw {
namespace {

using test::lines_of;
using test::read_fixture;

TEST(CudaErrors, TableIsUniqueAndRoundTrips) {
  std::set<int> codes;
  std::set<std::string_view> names;
  const CudaErrorTable t = cuda_error_table();
  ASSERT_GE(t.end - t.begin, 130);  // the whole enum of CUDA 13.0, runtime and driver
  for (const CudaErrorInfo* e = t.begin; e != t.end; ++e) {
    EXPECT_TRUE(codes.insert(e->code).second) << e->code;
    EXPECT_EQ(cuda_error_by_code(e->code), e);
    ASSERT_FALSE(e->runtime_name.empty() && e->driver_name.empty()) << e->code;
    // Driver-only errors (202, 916) have no runtime name and no cudaGetErrorString text.
    if (!e->runtime_name.empty()) {
      EXPECT_TRUE(names.insert(e->runtime_name).second) << e->runtime_name;
      EXPECT_EQ(cuda_error_by_name(e->runtime_name), e);
      // 200 and 300 print the same text: it names the first of them.
      EXPECT_EQ(cuda_error_by_text(e->text)->text, e->text) << e->text;
    }
    if (!e->driver_name.empty()) {
      EXPECT_TRUE(names.insert(e->driver_name).second) << e->driver_name;
      EXPECT_EQ(cuda_error_by_name(e->driver_name), e);
    }
  }
  EXPECT_EQ(cuda_error_by_name("CUDA_ERROR_CONTEXT_ALREADY_CURRENT")->code, 202);
  EXPECT_EQ(cuda_error_by_text(""), nullptr);  // a driver-only row's empty text names nothing
  EXPECT_EQ(cuda_error_by_code(12345), nullptr);
  EXPECT_EQ(cuda_error_by_name("cudaErrorNoSuchThing"), nullptr);
  EXPECT_EQ(cuda_error_by_text("SYSTEM NOT YET INITIALIZED")->code, 802);  // any case
}

TEST(CudaErrors, EveryShapeProgramsPrint) {
  struct Case {
    const char* line;
    int code;
  };
  for (const Case& c : std::vector<Case>{
           {"CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady) "
            "\"cudaSetDevice\"",
            802},
           {"UserWarning: CUDA initialization: ... Error 804: forward compatibility was attempted "
            "on non supported HW",
            804},
           {"RuntimeError: cuda runtime error (802) : system not yet initialized at THC.cpp:50",
            802},
           // Before CUDA 10.1 the runtime numbered 999 as 30: the text decides.
           {"RuntimeError: cuda runtime error (30) : unknown error at THCGeneral.cpp:70", 999},
           {"failed call to cuInit: CUDA_ERROR_UNKNOWN: unknown error", 999},
           {"[rank3]: RuntimeError: CUDA error: misaligned address\r", 716},
           // Rows of the whole enum beyond the common ones: by text, by either name.
           {"RuntimeError: CUDA error: operation not permitted when stream is capturing", 900},
           {"CUDA error: invalid device pointer (at cudaFree)", 17},
           {"cuCtxCreate failed: CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", 808},
           {"cudaStreamSynchronize returned cudaErrorContained", 226},
           // A text anywhere: long ones always, short ones where a call failed.
           {"Check failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or "
            "unavailable",
            46},
           {"cudaGetDeviceCount failed initialization error", 3},
           {"    cudaGetDeviceCount returned 3", 3},
           {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION: the provided PTX was compiled with an "
            "unsupported toolchain.",
            222},
           {"UserWarning: CUDA initialization: CUDA unknown error - this may be due to ...", 999},
       }) {
    const CudaErrorInfo* e = cuda_error_in_line(c.line);
    ASSERT_NE(e, nullptr) << c.line;
    EXPECT_EQ(e->code, c.code) << c.line;
  }
  // Lines that do not name a CUDA error.
  for (const char* l : {"unknown error in foo.py line 3", "Error 802 in the billing system",
                        "| NVIDIA-SMI 535.54.03   Driver Version: 535.54.03   CUDA Version: 12.2 |",
                        "cuda: Error 0 occurred", "CUDA_ERROR_NOT_A_REAL_NAME",
                        // a pod listing's columns (capture 365): the restarts, not an error code
                        "nvidia-cuda-validator-wgs28     0/1     Init:Error   3 (39s ago)     56s",
                        // a short text without a failed call, and a text glued to a word
                        "cuda kernels: initialization error handling enabled",
                        "cudaMalloc failed: out of memoryless allocator"})
    EXPECT_EQ(cuda_error_in_line(l), nullptr) << l;
}

TEST(CudaErrors, CapturesGiveTheirCodeUnderTheClassTransformations) {
  const std::string dmesg = read_fixture("009-dmesg-xid119-gsp-rpc-timeout", "dmesg.log");
  const std::string sep(44, '_');
  for (const auto& [id, code] : std::vector<std::pair<std::string, int>>{
           {"327-cuda-802-system-not-ready-bandwidthtest-thc-fabricmanager", 802},
           {"330-cuda-999-unknown-error-after-suspend-torch", 999},
           {"332-cuda-999-cuda-error-unknown-panic-mumax-after-suspend", 999}}) {
    const std::string log = read_fixture(id, "app.log");
    std::string crlf, indented;
    for (const std::string& l : lines_of(log)) {
      crlf += l + "\r\n";
      indented += "    " + l + "\n";
    }
    for (const std::string& text :
         {log, crlf, indented, dmesg + log, log + dmesg,
          sep + "\n\napp\n\n" + log + "\n" + sep + "\n\ndmesg:\n\n" + dmesg}) {
      Observation obs;
      add_capture(text, "app.log", obs);
      size_t n = 0;
      for (const AppMessage& m : obs.app_messages) n += m.cuda_error_code == code;
      EXPECT_GE(n, 1u) << id;
    }
  }
}

}  // namespace
}  // namespace gw
