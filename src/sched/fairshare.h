// Fair-share accounting, Slurm "classic" style: each account's usage in GPU-time decays with a
// half-life, and its fair-share factor is F = 2^(-U/S) (U = normalised usage, S = normalised
// shares). F is 1 for an account that used nothing, 0.5 when it used exactly its share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gw::sched {

struct FairShareOptions {
  int64_t half_life_ms = 7LL * 24 * 3600 * 1000;       // Slurm's PriorityDecayHalfLife default
  std::vector<std::pair<std::string, double>> shares;  // empty = every account equal
  double default_shares = 1.0;                         // for accounts not listed
};

class FairShareLedger {
 public:
  explicit FairShareLedger(FairShareOptions options = {});

  // Decays usage to `now_ms` and adds what running jobs used since the last call (the exact
  // integral of running GPUs under the decay, so calling often or rarely gives the same number).
  void advance(int64_t now_ms);
  void job_started(const std::string& account, unsigned gpus);
  void job_stopped(const std::string& account, unsigned gpus);
  void job_started_at(uint32_t index, unsigned gpus);  // by add_account's index
  void job_stopped_at(uint32_t index, unsigned gpus);
  void charge(const std::string& account, double gpu_ms);  // direct usage, e.g. history
  // Makes an account known (its shares count in everyone's normalised shares) and returns a
  // stable index for the fast factor_at().
  uint32_t add_account(const std::string& name) { return account(name).index; }
  double factor_at(uint32_t index) const;
  // The account's name, stored as long as the ledger lives (jobs keep a view of it).
  std::string_view name_at(uint32_t index) const { return by_index_.at(index)->name; }
  size_t account_count() const { return by_index_.size(); }

  double usage_gpu_ms(const std::string& account) const;
  double normalized_usage(const std::string& account) const;
  double normalized_shares(const std::string& account) const;
  double factor(const std::string& account) const;

  // F = 2^(-U/S); S = 0 gives 0 (no shares, lowest priority).
  static double classic_factor(double norm_usage, double norm_shares);

 private:
  struct Account {
    double shares = 1;
    double usage = 0;  // decayed GPU-ms
    unsigned running_gpus = 0;
    uint32_t index = 0;
    std::string_view name;  // the map's key
  };
  Account& account(const std::string& name);

  FairShareOptions options_;
  std::unordered_map<std::string, Account> accounts_;  // node-based: pointers stay valid
  std::vector<Account*> by_index_;
  mutable std::vector<double> factor_cache_;  // by index; empty = stale

  double total_usage_ = 0;
  double total_shares_ = 0;
  int64_t last_ms_ = 0;
  bool started_ = false;
};

}  // namespace gw::sched
