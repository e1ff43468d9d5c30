#include "sources/capture_merge.h"

#include <algorithm>
#include <set>
#include <string>

namespace gw {

namespace {

// Reasons that mean "held back": idle, application clocks and display clocks are benign.
constexpr uint64_t kLimiting = clock_reason::kSwPowerCap | clock_reason::kHwSlowdown |
                               clock_reason::kSwThermalSlowdown | clock_reason::kHwThermalSlowdown |
                               clock_reason::kHwPowerBrakeSlowdown;

template <class Peak, class T>
bool raise(Peak& peak, T v) {
  if (!peak.set) {
    peak.value = v;
    peak.set = true;
    return false;  // the first value is not a peak worth pinning on its own
  }
  if (v <= peak.value) return false;
  peak.value = v;
  return true;
}

template <class Peak, class T>
bool raise(Peak& peak, const std::optional<T>& v) {
  return v && raise(peak, *v);
}

std::string key_name(EventKind kind, const std::optional<std::string>& pci,
                     const std::optional<unsigned>& code) {
  std::string s(event_kind_name(kind));
  if (code) s += " " + std::to_string(*code);
  s += " on " + pci.value_or("unknown GPU");
  return s;
}

}  // namespace

bool SampleReducer::is_pinned(const Snapshot& s) {
  // The peaks as locals while the GPUs are read: stored to through `this`, the compiler must
  // reload them (and the GPU's readings) after every raise. This runs for every snapshot.
  auto temp = max_temp_;
  auto power = max_power_;
  auto mem = max_mem_;
  auto ecc = max_ecc_;
  bool pin = seen_ > 1 && s.gpus.size() != prev_gpus_;  // a GPU came or went
  prev_gpus_ = s.gpus.size();
  for (const auto& g : s.gpus) {
    const GpuSample& x = g.sample;
    if (x.clock_reasons && (*x.clock_reasons & kLimiting)) pin = true;
    if (g.access != GpuAccess::kOk || !g.failed_readings.empty()) pin = true;
    // Every raise() must run (to track the peaks), hence no short-circuit.
    pin = raise(temp, x.temp_c) || pin;
    pin = raise(power, x.power_mw) || pin;
    pin = raise(mem, x.mem_used_bytes) || pin;
    if (x.ecc_dbe_volatile || x.ecc_sbe_volatile)
      pin = raise(ecc, x.ecc_dbe_volatile.value_or(0) + x.ecc_sbe_volatile.value_or(0)) || pin;
  }
  max_temp_ = temp;
  max_power_ = power;
  max_mem_ = mem;
  max_ecc_ = ecc;
  return pin;
}

bool SampleReducer::admit(const Snapshot& s, bool last, size_t& seq, size_t& pin_seq) {
  if (s.gpus.size() > widest_) {
    widest_ = s.gpus.size();
    cap_ =
        std::min(cap_, std::max(kMinSampleCap, kSampleBudgetBytes / (widest_ * sizeof(GpuState))));
  }
  seq = seen_++;
  pin_seq = is_pinned(s) ? pins_seen_++ : kUnpinned;
  return keeps(seq, pin_seq, last);  // decided before any copy
}

void SampleReducer::add(Snapshot&& s, bool last) {
  if (s.gpus.size() > kMaxGpusPerSnapshot) {
    gpus_left_out_ += s.gpus.size() - kMaxGpusPerSnapshot;
    s.gpus.resize(kMaxGpusPerSnapshot);
    s.gpus.shrink_to_fit();  // kept, it would hold the whole width
  }
  size_t seq = 0, pin_seq = 0;
  if (!admit(s, last, seq, pin_seq)) return;
  kept_.push_back({seq, pin_seq, last, std::move(s)});
  if (kept_.size() > cap_) compact();
}

void SampleReducer::add(const Snapshot& s, bool last) {
  if (s.gpus.size() > kMaxGpusPerSnapshot) return add(Snapshot(s), last);
  size_t seq = 0, pin_seq = 0;
  if (!admit(s, last, seq, pin_seq)) return;
  if (spare_.empty()) {
    kept_.push_back({seq, pin_seq, last, s});
  } else {
    // Copy-assign into a dropped snapshot: its GPU vector and strings are reused, so keeping
    // a snapshot costs no allocation once the first compaction has run.
    kept_.push_back({seq, pin_seq, last, std::move(spare_.back())});
    spare_.pop_back();
    kept_.back().snap = s;
  }
  if (kept_.size() > cap_) compact();
}

void SampleReducer::demote_last() {
  if (kept_.empty() || !kept_.back().last) return;
  Kept& k = kept_.back();
  k.last = false;
  // Kept only for being last: gone, as it would have been had more followed it at once.
  if (!keeps(k.seq, k.pin_seq, false)) {
    if (spare_.size() < cap_ / 2) spare_.push_back(std::move(k.snap));
    kept_.pop_back();
  }
}

void SampleReducer::compact() {
  // The strided samples and the pinned ones share the cap: whichever holds more than half of
  // it is thinned, by doubling its own stride. A stride of its own keeps the pinned ones from
  // thinning the regular samples (a GPU throttled for a whole log pins every snapshot), and
  // stops once nothing is left to thin. Order is kept; dropped snapshots go to the spare pool
  // (at most cap/2: what the next round of adds can use).
  while (kept_.size() > cap_ && (stride_ < seen_ || pin_stride_ < pins_seen_)) {
    const auto strided = static_cast<size_t>(std::count_if(
        kept_.begin(), kept_.end(), [&](const Kept& k) { return k.seq % stride_ == 0; }));
    if ((strided > cap_ / 2 && stride_ < seen_) || pin_stride_ >= pins_seen_)
      stride_ *= 2;
    else
      pin_stride_ *= 2;
    size_t out = 0;
    for (size_t i = 0; i < kept_.size(); ++i) {
      Kept& k = kept_[i];
      if (!keeps(k.seq, k.pin_seq, k.last)) {
        if (spare_.size() < cap_ / 2) spare_.push_back(std::move(k.snap));
        continue;
      }
      if (out != i) kept_[out] = std::move(k);
      ++out;
    }
    kept_.resize(out);
  }
}

size_t SampleReducer::pinned() const {
  return static_cast<size_t>(std::count_if(kept_.begin(), kept_.end(),
                                           [](const Kept& k) { return k.pin_seq != kUnpinned; }));
}

std::vector<Snapshot> SampleReducer::take() {
  std::vector<Snapshot> out;
  out.reserve(kept_.size());
  for (auto& k : kept_) out.push_back(std::move(k.snap));
  kept_.clear();
  spare_.clear();
  return out;
}

void note_reduction(const SampleReducer& r, std::string_view origin, Observation& obs) {
  const size_t seen = r.seen(), stride = r.stride(), pinned = r.pinned(), kept = r.kept();
  if (kept < seen) {
    const std::string pins = r.pin_stride() > 1
                                 ? "every " + std::to_string(r.pin_stride()) + "th of the " +
                                       std::to_string(r.pins_seen()) + " pinned"
                                 : "the " + std::to_string(pinned) + " pinned";
    obs.notes.push_back(std::string(origin) + ": kept " + std::to_string(kept) + " of " +
                        std::to_string(seen) + " snapshots: every " + std::to_string(stride) +
                        "th, " + pins +
                        " (a limiting clock reason, a new peak, a GPU not read cleanly or a "
                        "change in the GPU count) and the newest");
  }
  if (const size_t n = r.gpus_left_out(); n > 0)
    obs.notes.push_back(std::string(origin) + ": " + std::to_string(n) +
                        " GPU reading(s) past the first " + std::to_string(kMaxGpusPerSnapshot) +
                        " GPUs of a snapshot were left out");
}

void merge_samples(SampleReducer& r, std::string_view origin, Observation& obs) {
  note_reduction(r, origin, obs);
  for (auto& s : r.take()) obs.samples.push_back(std::move(s));
}

EventReducer::EventReducer(Observation& obs, size_t per_key) : obs_(obs), per_key_(per_key) {
  for (size_t i = 0; i < obs_.event_counts.size(); ++i) {
    const auto& c = obs_.event_counts[i];
    index_[{static_cast<int>(c.kind), c.pci_bus_id.value_or(""),
            c.code ? static_cast<int64_t>(*c.code) : -1}] = i;
  }
}

void EventReducer::add(Event&& e) {
  const Key key{static_cast<int>(e.kind), e.pci_bus_id.value_or(""),
                e.code ? static_cast<int64_t>(*e.code) : -1};
  auto it = index_.find(key);
  if (it == index_.end()) {
    if (obs_.event_counts.size() >= kMaxEventKeys) {
      ++untracked_;
      return;
    }
    EventCount c;
    c.kind = e.kind;
    c.pci_bus_id = e.pci_bus_id;
    c.code = e.code;
    obs_.event_counts.push_back(std::move(c));
    it = index_.emplace(key, obs_.event_counts.size() - 1).first;
  }
  EventCount& c = obs_.event_counts[it->second];
  ++c.count;
  if (e.time_ms) {
    if (!c.first_time_ms) c.first_time_ms = e.time_ms;
    c.last_time_ms = e.time_ms;
  }
  if (e.uptime_s) {
    if (!c.first_uptime_s) c.first_uptime_s = e.uptime_s;
    c.last_uptime_s = e.uptime_s;
  }
  const size_t when_full = it->second < kKeysWithManyEvents ? kEventsPerKeyWhenFull : 1;
  const size_t limit =
      obs_.events.size() < kMaxKeptEvents ? per_key_ : std::min(per_key_, when_full);
  if (c.count <= limit)
    obs_.events.push_back(std::move(e));
  else
    ++dropped_[key];
}

std::vector<std::string> EventReducer::finish(std::string_view origin) {
  std::vector<std::string> out;
  uint64_t rest_keys = 0, rest_events = 0;
  for (const auto& [key, n] : dropped_) {
    const auto& c = obs_.event_counts[index_[key]];
    if (out.size() == kMaxEventNotes) {
      ++rest_keys;
      rest_events += n;
      continue;
    }
    out.push_back(std::string(origin) + ": " + std::to_string(c.count) + " " +
                  key_name(c.kind, c.pci_bus_id, c.code) + " events; kept the first " +
                  std::to_string(c.count - n) + ", exact counts in event_counts");
  }
  if (rest_keys > 0)
    out.push_back(std::string(origin) + ": " + std::to_string(rest_events) + " more events of " +
                  std::to_string(rest_keys) + " other (kind, GPU, code) left out the same way");
  dropped_.clear();
  return out;
}

namespace {

struct Ids {
  std::set<std::string> uuids, buses, hosts;
  bool any() const { return !uuids.empty() || !buses.empty(); }
};

Ids ids_of(const std::vector<Snapshot>& samples, size_t b, size_t e) {
  Ids out;
  for (size_t i = b; i < e; ++i) {
    if (samples[i].hostname) out.hosts.insert(*samples[i].hostname);
    for (const auto& g : samples[i].gpus) {
      if (!g.info.uuid.empty()) out.uuids.insert(g.info.uuid);
      if (!g.info.pci_bus_id.empty()) out.buses.insert(g.info.pci_bus_id);
    }
  }
  return out;
}

bool intersects(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& x) { return b.count(x) > 0; });
}

}  // namespace

void check_machines(Observation& obs, size_t first_new, std::string_view origin) {
  auto& samples = obs.samples;
  if (first_new == 0 || first_new >= samples.size()) return;
  // bus id <-> UUID as the inputs that know both state them; a bus id seen with two UUIDs
  // belongs to two machines.
  std::map<std::string, std::string> uuid_of_bus, bus_of_uuid;
  bool conflict = false;
  for (const auto& s : samples)
    for (const auto& g : s.gpus) {
      if (g.info.uuid.empty() || g.info.pci_bus_id.empty()) continue;
      auto [it, fresh] = uuid_of_bus.emplace(g.info.pci_bus_id, g.info.uuid);
      if (!fresh && it->second != g.info.uuid) conflict = true;
      bus_of_uuid.emplace(g.info.uuid, g.info.pci_bus_id);
    }
  const Ids before = ids_of(samples, 0, first_new),
            added = ids_of(samples, first_new, samples.size());
  std::string why;
  if (conflict)
    why = "one PCI bus id carries two different GPU UUIDs";
  else if (!before.uuids.empty() && !added.uuids.empty() && !intersects(before.uuids, added.uuids))
    why = "no GPU UUID in common with the inputs read before it";
  else if (!before.hosts.empty() && !added.hosts.empty() && !intersects(before.hosts, added.hosts))
    why = "its host name differs from the inputs read before it";
  if (!why.empty()) {
    const std::string msg = std::string(origin) +
                            ": captures of different machines given together (" + why +
                            "): their GPUs are reported side by side, matched by UUID or bus id";
    obs.notes.push_back(msg);
    for (auto it = obs.coverage.rbegin(); it != obs.coverage.rend(); ++it) {
      if (it->origin != origin) continue;
      it->incomplete = true;
      it->incomplete_reasons.push_back("captures of different machines given together (" + why +
                                       ")");
      break;
    }
    return;  // lending identities across machines would merge GPUs that differ
  }
  if (before.any() && added.any() && before.uuids.empty() != added.uuids.empty() &&
      !intersects(before.buses, added.buses) && uuid_of_bus.empty())
    obs.notes.push_back(std::string(origin) +
                        ": no GPU bus id in common with the inputs read before it");
  // Same machine: give each GPU the identity another input knows, so that one GPU is one
  // series whether a file names it by UUID (CSV) or by bus id (dmesg, -q).
  for (auto& s : samples)
    for (auto& g : s.gpus) {
      if (g.info.uuid.empty() && !g.info.pci_bus_id.empty()) {
        if (auto it = uuid_of_bus.find(g.info.pci_bus_id); it != uuid_of_bus.end())
          g.info.uuid = it->second;
      } else if (!g.info.uuid.empty() && g.info.pci_bus_id.empty()) {
        if (auto it = bus_of_uuid.find(g.info.uuid); it != bus_of_uuid.end())
          g.info.pci_bus_id = it->second;
      }
    }
}

}  // namespace gw
