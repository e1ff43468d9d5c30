// Clock: the only way scheduling and sampling code learns the time, so tests and the
// simulator can drive it.
#pragma once

#include <cstdint>

namespace gw {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch (or since the simulation start for virtual clocks).
  virtual int64_t now_ms() const = 0;
};

class SystemClock final : public Clock {
 public:
  int64_t now_ms() const override;
};

// A clock that only moves when told to: tests and the simulator.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 0) : now_ms_(start_ms) {}
  int64_t now_ms() const override { return now_ms_; }
  void set_ms(int64_t t) { now_ms_ = t; }
  void advance_ms(int64_t dt) { now_ms_ += dt; }

 private:
  int64_t now_ms_;
};

}  // namespace gw
