// An active test (doctor --stress, check --active) holds the GPUs it loads away from the queue:
// before the load it drains each through the daemon's socket, afterwards it resumes the ones it
// drained, and only while the drain is still its own (an admin's drain, or one the daemon made
// for a fault found meanwhile, stays). No daemon on the socket: nothing to drain.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"

namespace gw::queue {

class TestDrain {
 public:
  // `gpus` empty: every GPU the queue knows. Errors: queue.denied (the daemon refused: only
  // root or its admin group drains), queue.connect is not one (no queue = nothing to do; null).
  static Result<std::unique_ptr<TestDrain>> acquire(const std::string& socket,
                                                    const std::vector<unsigned>& gpus,
                                                    const std::string& reason);
  ~TestDrain();  // resumes what it drained
  TestDrain(const TestDrain&) = delete;
  TestDrain& operator=(const TestDrain&) = delete;
  const std::vector<unsigned>& drained() const { return drained_; }
  // "drained GPUs 0, 1 in the queue at /run/gpuwarden/queue.sock for the test"
  std::string summary() const;

 private:
  TestDrain(std::string socket, std::string reason)
      : socket_(std::move(socket)), reason_(std::move(reason)) {}
  void resume_own();
  std::string socket_;
  std::string reason_;
  std::vector<unsigned> drained_;
  std::vector<unsigned> kept_;  // already drained by someone else: left as they are
};

// What doctor --stress and check --active do before loading: drain `gpus` in the queue at the
// default socket (for a fake GPU source, the demo or a scenario, only when GPUWARDEN_SOCKET
// names one: never a real queue's GPUs for a played fleet). `refused` is set when the daemon
// refused the drain and `force` is false: the test must not load then. `note` says what was done.
struct TestHold {
  std::unique_ptr<TestDrain> drain;
  std::optional<std::string> refused;
  std::string note;
};
TestHold hold_for_test(const std::vector<unsigned>& gpus, bool fake_source, bool force);

}  // namespace gw::queue
