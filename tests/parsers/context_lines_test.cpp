// Context lines (issue 19, honest coverage): a traceback frame, PyTorch's "CUDA kernel errors
// might be asynchronously reported", NCCL's "x.cc:79 -> 3" return trace, a runtime hook's line
// are read only as part of a message near them. Alone they are listed as not read. The lines
// are real (captures 112, 267, 373, 402); the ProcessGroupNCCL lines are PyTorch's wording.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sources/app/app_messages.h"
#include "sources/captures.h"

namespace gw {
namespace {

const std::vector<std::string>& context_lines() {
  static const std::vector<std::string> lines = {
      "CUDA kernel errors might be asynchronously reported at some other API call, so the "
      "stacktrace below might be incorrect.",
      "axa:3048391:3048566 [0] NCCL INFO net.cc:79 -> 3",
      "  File \"/home/user/anaconda3/envs/work/lib/python3.8/site-packages/torch/cuda/"
      "__init__.py\", line 153, in _lazy_init",
      "docker: Error response from daemon: failed to create shim: OCI runtime create failed: "
      "container_linux.go:380: starting container process caused: process_linux.go:545: "
      "container init caused: Running hook #0:: error running hook: exit status 1, stdout:",
  };
  return lines;
}

InputCoverage coverage(const std::string& text, Observation* keep = nullptr) {
  Observation obs;
  add_capture(text, "in.txt", obs);
  if (keep) *keep = obs;
  return obs.coverage.at(0);
}

std::vector<std::pair<std::string, std::string>> variants(const std::string& line) {
  return {{"as-is", line + "\n"},
          {"indented", "      " + line + "\n"},
          {"crlf", line + "\r\n"},
          {"rank-prefix", "[rank0]: " + line + "\n"},
          {"after-blank-lines", "\n\n\n" + line + "\n"}};
}

TEST(ContextLines, AloneTheyAreNotRead) {
  for (const std::string& line : context_lines())
    for (const auto& [tag, text] : variants(line)) {
      const InputCoverage c = coverage(text);
      EXPECT_EQ(c.lines_not_understood, 1u) << tag << ": " << line;
      EXPECT_EQ(c.first_not_understood_line, text.find(line) == 3 ? 4u : 1u) << tag;
    }
  // The ones that name CUDA or NCCL are listed, with their line, among the unread GPU lines.
  for (size_t i : {0u, 1u}) {
    const InputCoverage c = coverage("\n" + context_lines()[i] + "\n");
    ASSERT_EQ(c.gpu_unread.size(), 1u) << context_lines()[i];
    EXPECT_EQ(c.gpu_unread[0].line, 2u);
  }
}

TEST(ContextLines, NearAMessageTheyAreRead) {
  const std::string error = "RuntimeError: CUDA error: uncorrectable ECC error encountered";
  for (const std::string& line : context_lines()) {
    // After the message (PyTorch prints the hint below the error) and before it (a traceback).
    for (const std::string& text : {error + "\n" + line + "\n", line + "\n\n" + error + "\n"}) {
      Observation obs;
      const InputCoverage c = coverage(text, &obs);
      EXPECT_EQ(c.lines_not_understood, 0u) << line;
      ASSERT_EQ(obs.app_messages.size(), 1u) << line;
      EXPECT_EQ(obs.app_messages[0].kind, AppMessageKind::kUncorrectableEcc);
    }
  }
}

TEST(ContextLines, BeyondTheReachOfAMessageTheyAreNotRead) {
  const std::string error = "RuntimeError: CUDA error: an illegal memory access was encountered";
  const std::string gap(AppScanner::kContextReach + 5, '\n');
  const std::string& hint = context_lines()[0];
  const InputCoverage after = coverage(error + "\n" + gap + hint + "\n");
  EXPECT_EQ(after.lines_not_understood, 1u);
  ASSERT_EQ(after.gpu_unread.size(), 1u);
  EXPECT_EQ(after.gpu_unread[0].line, AppScanner::kContextReach + 7);
  const InputCoverage before = coverage(hint + "\n" + gap + error + "\n");
  EXPECT_EQ(before.lines_not_understood, 1u);
  EXPECT_EQ(before.first_not_understood_line, 1u);
}

// A traceback's frames and source lines, then its error: all read; the same frames cut from
// their error are not.
TEST(ContextLines, ATracebackIsReadWithItsErrorOnly) {
  const std::string frames =
      "Traceback (most recent call last):\n"
      "  File \"train.py\", line 12, in <module>\n"
      "    model.cuda()\n" +
      context_lines()[2] + "\n    torch._C._cuda_init()\n";
  EXPECT_EQ(coverage(frames + "RuntimeError: CUDA error: unknown error\n").lines_not_understood,
            0u);
  EXPECT_EQ(coverage(frames).lines_not_understood, 5u);
}

TEST(ContextLines, ProcessGroupNcclSummaryAndHeartbeatAreTimeouts) {
  for (const std::string line :
       {"[E ProcessGroupNCCL.cpp:475] Some NCCL operations have failed or timed out. Due to the "
        "asynchronous nature of CUDA kernels, subsequent GPU operations might run on "
        "corrupted/incomplete data.",
        "[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Heartbeat monitor timed out! "
        "Process will be terminated after dumping debug info. workMetaList_.size()=0"}) {
    Observation obs;
    EXPECT_EQ(coverage(line + "\r\n", &obs).lines_not_understood, 0u);
    ASSERT_EQ(obs.app_messages.size(), 1u) << line;
    EXPECT_EQ(obs.app_messages[0].kind, AppMessageKind::kNcclTimeout);
    EXPECT_EQ(obs.app_messages[0].framework, "nccl");
  }
}

// PyTorch 2.1 printed "total capacty": the figures are the same sentence's.
TEST(ContextLines, PytorchOomWithTheMisspelledCapacityKeepsItsArithmetic) {
  const std::string line =
      "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has "
      "a total capacty of 79.15 GiB of which 35.44 MiB is free. Process 3254181 has 40.29 GiB "
      "memory in use. Including non-PyTorch memory, this process has 38.82 GiB memory in use. "
      "Of the allocated memory 37.97 GiB is allocated by PyTorch, and 329.51 MiB is reserved by "
      "PyTorch but unallocated.";
  const auto m = parse_app_message_line(line, "app.log");
  ASSERT_TRUE(m);
  ASSERT_TRUE(m->total_bytes);
  EXPECT_NEAR(static_cast<double>(*m->total_bytes), 79.15 * 1024 * 1024 * 1024, 1e7);
  ASSERT_TRUE(m->free_bytes);
  ASSERT_EQ(m->other_processes.size(), 1u);
  EXPECT_EQ(m->other_processes[0].pid, 3254181u);
  ASSERT_TRUE(m->process_bytes);
}

}  // namespace
}  // namespace gw
