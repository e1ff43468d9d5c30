#include "sched/fairshare.h"

#include <cmath>

namespace gw::sched {

FairShareLedger::FairShareLedger(FairShareOptions options) : options_(std::move(options)) {
  for (const auto& [name, s] : options_.shares) {
    if (accounts_.count(name)) continue;
    auto& [key, a] = *accounts_.try_emplace(name).first;
    a.name = key;
    a.shares = s;
    a.index = static_cast<uint32_t>(by_index_.size());
    by_index_.push_back(&a);
    total_shares_ += s;
  }
}

FairShareLedger::Account& FairShareLedger::account(const std::string& name) {
  auto it = accounts_.find(name);
  if (it != accounts_.end()) return it->second;
  auto& [key, a] = *accounts_.try_emplace(name).first;
  a.name = key;
  a.shares = options_.default_shares;
  a.index = static_cast<uint32_t>(by_index_.size());
  by_index_.push_back(&a);
  total_shares_ += a.shares;
  factor_cache_.clear();
  return a;
}

void FairShareLedger::advance(int64_t now_ms) {
  if (!started_) {
    started_ = true;
    last_ms_ = now_ms;
    return;
  }
  if (now_ms <= last_ms_) return;
  const double dt = static_cast<double>(now_ms - last_ms_);
  last_ms_ = now_ms;
  const double hl = static_cast<double>(options_.half_life_ms);
  const double decay = hl > 0 ? std::exp2(-dt / hl) : 1.0;
  // Integral of r * 2^(-(t-s)/hl) ds over the interval, per running GPU.
  const double accrual = hl > 0 ? hl / std::log(2.0) * (1.0 - decay) : dt;
  total_usage_ = 0;
  factor_cache_.clear();
  for (auto& [name, a] : accounts_) {
    a.usage = a.usage * decay + static_cast<double>(a.running_gpus) * accrual;
    total_usage_ += a.usage;
  }
}

void FairShareLedger::job_started(const std::string& acct, unsigned gpus) {
  account(acct).running_gpus += gpus;
}

void FairShareLedger::job_stopped(const std::string& acct, unsigned gpus) {
  Account& a = account(acct);
  a.running_gpus = gpus > a.running_gpus ? 0 : a.running_gpus - gpus;
}

void FairShareLedger::job_started_at(uint32_t index, unsigned gpus) {
  by_index_.at(index)->running_gpus += gpus;
}

void FairShareLedger::job_stopped_at(uint32_t index, unsigned gpus) {
  Account& a = *by_index_.at(index);
  a.running_gpus = gpus > a.running_gpus ? 0 : a.running_gpus - gpus;
}

void FairShareLedger::charge(const std::string& acct, double gpu_ms) {
  account(acct).usage += gpu_ms;
  total_usage_ += gpu_ms;
  factor_cache_.clear();
}

double FairShareLedger::usage_gpu_ms(const std::string& acct) const {
  auto it = accounts_.find(acct);
  return it == accounts_.end() ? 0.0 : it->second.usage;
}

double FairShareLedger::normalized_usage(const std::string& acct) const {
  return total_usage_ > 0 ? usage_gpu_ms(acct) / total_usage_ : 0.0;
}

double FairShareLedger::normalized_shares(const std::string& acct) const {
  auto it = accounts_.find(acct);
  const double s = it == accounts_.end() ? options_.default_shares : it->second.shares;
  const double total = it == accounts_.end() ? total_shares_ + s : total_shares_;
  return total > 0 ? s / total : 0.0;
}

double FairShareLedger::factor(const std::string& acct) const {
  return classic_factor(normalized_usage(acct), normalized_shares(acct));
}

double FairShareLedger::factor_at(uint32_t index) const {
  if (index >= by_index_.size()) return 1.0;
  if (factor_cache_.empty()) {  // one exp2 per account until usage changes
    for (const Account* a : by_index_) {
      const double u = total_usage_ > 0 ? a->usage / total_usage_ : 0.0;
      factor_cache_.push_back(
          classic_factor(u, total_shares_ > 0 ? a->shares / total_shares_ : 0.0));
    }
  }
  return factor_cache_[index];
}

double FairShareLedger::classic_factor(double norm_usage, double norm_shares) {
  if (norm_shares <= 0) return 0.0;
  return std::exp2(-norm_usage / norm_shares);
}

}  // namespace gw::sched
