// AlertEngine: per (rule, GPU) instances moving inactive -> pending -> firing -> resolved.
// Transitions come only from state changes, so a condition that stays true yields one
// firing message however often it is evaluated, and one resolved message when it ends.
#include <algorithm>
#include <set>

#include "alert/config_internal.h"
#include "alert/track.h"
#include "diagnose/context.h"

namespace gw::alert {
namespace {

// Bounds that keep memory flat whatever the sampling rate or an Xid storm: the counts a
// window reports saturate there instead of growing the daemon.
constexpr size_t kMaxPointsPerGpu = 100'000;
constexpr size_t kMaxEventsPerGpu = 10'000;

std::string fingerprint(std::string_view rule, std::string_view key) {
  uint64_t h = 1469598103934665603ULL;  // FNV-1a: stable across runs and builds
  const auto mix = [&](std::string_view s) {
    for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  };
  mix(rule);
  mix("\x1f");
  mix(key);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) out[static_cast<size_t>(i)] = kHex[h & 0xf];
  return out;
}

std::string track_key(const DeviceInfo& d) {
  if (!d.uuid.empty()) return d.uuid;
  if (!d.pci_bus_id.empty()) return "pci:" + d.pci_bus_id;
  return "index:" + std::to_string(d.index);
}

std::string format_value(std::optional<double> v) {
  if (!v) return "unknown";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", *v);
  return buf;
}

}  // namespace

struct AlertEngine::Impl {
  struct Instance {
    AlertState st;
    std::map<std::string, std::string> annotations;  // as sent when it fired
    std::string fingerprint;
  };

  std::vector<AlertRule> rules;
  std::map<std::string, Track> tracks;
  std::map<std::string, std::string> pci_to_key;
  std::map<unsigned, std::string> index_to_key;
  std::map<std::pair<std::string, std::string>, Instance> instances;
  std::optional<std::string> hostname;
  Track host;
  int64_t max_window_ms = 0;
  int64_t last_now_ms = 0;
  std::vector<Event> replay;  // restored events, ingested with their own times

  explicit Impl(std::vector<AlertRule> r) : rules(std::move(r)) {
    host.target.key = "host";
    recompute_window();
  }

  void recompute_window() {
    max_window_ms = 0;
    for (const AlertRule& r : rules) max_window_ms = std::max(max_window_ms, r.window.count());
  }

  Track& track_for(const std::optional<std::string>& pci, std::optional<unsigned> index) {
    if (pci) {
      if (auto it = pci_to_key.find(*pci); it != pci_to_key.end()) return tracks[it->second];
    }
    if (index) {
      if (auto it = index_to_key.find(*index); it != index_to_key.end()) return tracks[it->second];
    }
    if (pci) {
      Track& t = tracks["pci:" + *pci];
      t.target.key = "pci:" + *pci;
      t.target.pci_bus_id = pci;
      pci_to_key[*pci] = t.target.key;
      return t;
    }
    return host;
  }

  void ingest(int64_t now, const Snapshot& snap, const std::vector<Event>& events,
              std::vector<AlertTransition>& out) {
    if (snap.hostname) hostname = snap.hostname;
    for (auto& [k, t] : tracks) t.current.reset();
    std::map<unsigned, std::string> fresh_index;
    for (const GpuState& g : snap.gpus) {
      const std::string key = track_key(g.info);
      Track& t = tracks[key];
      t.target.key = key;
      t.target.gpu = g.info.index;
      if (!g.info.uuid.empty()) t.target.uuid = g.info.uuid;
      if (!g.info.pci_bus_id.empty()) {
        t.target.pci_bus_id = g.info.pci_bus_id;
        // A GPU first known from the kernel log by its address keeps that history.
        if (auto old = tracks.find("pci:" + g.info.pci_bus_id);
            old != tracks.end() && old->first != key) {
          for (const EventPoint& e : old->second.events) t.events.push_back(e);
          std::sort(t.events.begin(), t.events.end(),
                    [](const EventPoint& a, const EventPoint& b) { return a.t_ms < b.t_ms; });
          // Its instances end here; the GPU's own key carries on from now.
          for (auto it = instances.begin(); it != instances.end();) {
            if (it->first.second != old->first) {
              ++it;
              continue;
            }
            if (it->second.st.status == AlertStatus::kFiring) {
              out.push_back(
                  transition(it->second, AlertTransition::Kind::kResolved, std::nullopt, now));
            }
            it = instances.erase(it);
          }
          tracks.erase(old);
        }
        pci_to_key[g.info.pci_bus_id] = key;
      }
      if (!g.info.name.empty()) t.target.model = g.info.name;
      t.info = g.info;
      t.current = g;
      t.seen = true;
      fresh_index[g.info.index] = key;
      if (g.access == GpuAccess::kOk) {
        t.points.push_back({now, is_loaded(g.sample), g.sample.clock_reasons});
      }
    }
    // Keep the old index of GPUs that vanished: their events still name them by index.
    for (auto& [idx, key] : fresh_index) index_to_key[idx] = key;
    for (const Event& e : replay) {
      Track& t = track_for(e.pci_bus_id, e.gpu_index);
      if (&t != &host) t.events.push_back({e.time_ms.value_or(now), e.kind, e.code});
    }
    replay.clear();
    for (const Event& e : events) {
      Track& t = track_for(e.pci_bus_id, e.gpu_index);
      if (&t == &host) continue;  // an event about no GPU in particular
      t.events.push_back({now, e.kind, e.code});
    }
    const int64_t horizon = now - max_window_ms;
    for (auto& [k, t] : tracks) {
      // One point older than the window stays: it bounds the first interval inside it.
      while (t.points.size() > 1 && t.points[1].t_ms <= horizon) t.points.pop_front();
      while (t.points.size() > kMaxPointsPerGpu) t.points.pop_front();
      while (!t.events.empty() && t.events.front().t_ms <= horizon) t.events.pop_front();
      while (t.events.size() > kMaxEventsPerGpu) t.events.pop_front();
    }
  }

  std::string render(std::string_view tmpl, const AlertRule& r, const Track& t,
                     std::optional<double> v, const MetricInput& in) const {
    std::string out;
    for (size_t i = 0; i < tmpl.size(); ++i) {
      const size_t j = tmpl[i] == '{' ? tmpl.find('}', i) : std::string_view::npos;
      if (j == std::string_view::npos) {
        out += tmpl[i];
        continue;
      }
      const std::string_view name = tmpl.substr(i + 1, j - i - 1);
      std::string rep;
      if (name == "rule")
        rep = r.name;
      else if (name == "gpu")
        rep = t.target.gpu ? std::to_string(*t.target.gpu) : t.target.pci_bus_id.value_or("host");
      else if (name == "uuid")
        rep = t.target.uuid.value_or("unknown");
      else if (name == "pci_bus_id")
        rep = t.target.pci_bus_id.value_or("unknown");
      else if (name == "model")
        rep = t.target.model.value_or("unknown model");
      else if (name == "hostname")
        rep = hostname.value_or("unknown host");
      else if (name == "value")
        rep = format_value(v);
      else if (name == "threshold")
        rep = format_value(r.threshold);
      else if (name == "metric")
        rep = r.metric.value_or("");
      else if (name == "severity")
        rep = std::string(severity_name(r.severity));
      else if (name == "finding")
        rep = r.finding.value_or("");
      else if (name == "window")
        rep = format_duration(r.window);
      else if (name == "xids") {
        std::vector<unsigned> xs = xids_in_window(in);
        std::vector<unsigned> uniq;
        for (unsigned x : xs) {
          if (std::find(uniq.begin(), uniq.end(), x) == uniq.end()) uniq.push_back(x);
        }
        for (unsigned x : uniq) rep += (rep.empty() ? "" : ", ") + std::to_string(x);
        if (rep.empty()) rep = "none";
      } else {
        out += tmpl[i];
        continue;
      }
      out += rep;
      i = j;
    }
    return out;
  }

  std::map<std::string, std::string> labels_for(const AlertRule& r, const Track& t) const {
    std::map<std::string, std::string> l;
    l["alertname"] = r.name;
    l["severity"] = std::string(severity_name(r.severity));
    if (t.target.gpu) l["gpu"] = std::to_string(*t.target.gpu);
    if (t.target.uuid) l["UUID"] = *t.target.uuid;
    if (t.target.pci_bus_id) l["pci_bus_id"] = *t.target.pci_bus_id;
    if (t.target.model) l["modelName"] = *t.target.model;
    if (t.info && t.info->minor_number)
      l["device"] = "nvidia" + std::to_string(*t.info->minor_number);
    if (hostname) l["Hostname"] = *hostname;  // dcgm-exporter's spelling
    for (const auto& [k, v] : r.labels) l[k] = v;
    return l;
  }

  void step(const AlertRule& r, const Track& t, std::optional<double> v, bool fire, bool keep,
            const Finding* f, int64_t now, std::chrono::milliseconds window,
            std::vector<AlertTransition>& out) {
    Instance& in = instances[{r.name, t.target.key}];
    AlertState& st = in.st;
    if (in.fingerprint.empty()) in.fingerprint = fingerprint(r.name, t.target.key);
    st.rule = r.name;
    st.target = t.target;
    st.severity = r.severity;
    st.value = v;
    st.last_eval_ms = now;
    if (st.status == AlertStatus::kInactive && fire) {
      st.status = AlertStatus::kPending;
      st.active_since_ms = now;
    }
    if (st.status == AlertStatus::kPending) {
      if (!fire) {
        st.status = AlertStatus::kInactive;
        st.active_since_ms.reset();
      } else if (now - *st.active_since_ms >= r.for_duration.count()) {
        st.status = AlertStatus::kFiring;
        st.firing_since_ms = now;
        st.clear_since_ms.reset();
        st.labels = labels_for(r, t);
        const MetricInput mi{t, now, window};
        in.annotations.clear();
        for (const auto& [k, tmpl] : r.annotations) in.annotations[k] = render(tmpl, r, t, v, mi);
        if (!in.annotations.count("summary")) {
          in.annotations["summary"] =
              f ? r.name + ": " + f->title
                : render("{rule}: {metric} is {value} ({metric} " +
                             std::string(compare_op_text(r.op)) + " {threshold}) on GPU {gpu}",
                         r, t, v, mi);
        }
        if (f && !f->evidence.empty() && !in.annotations.count("description")) {
          std::string d;
          for (const std::string& e : f->evidence) d += (d.empty() ? "" : "; ") + e;
          in.annotations["description"] = d;
        }
        if (v) in.annotations["value"] = format_value(v);
        out.push_back(transition(in, AlertTransition::Kind::kFiring, v, now));
      }
      return;
    }
    if (st.status == AlertStatus::kFiring) {
      if (keep) {
        st.clear_since_ms.reset();
        return;
      }
      if (!st.clear_since_ms) st.clear_since_ms = now;
      if (now - *st.clear_since_ms >= r.keep_firing_for.count()) {
        out.push_back(transition(in, AlertTransition::Kind::kResolved, v, now));
        reset(st);
      }
    }
  }

  static void reset(AlertState& st) {
    st.status = AlertStatus::kInactive;
    st.active_since_ms.reset();
    st.firing_since_ms.reset();
    st.clear_since_ms.reset();
  }

  AlertTransition transition(const Instance& in, AlertTransition::Kind kind,
                             std::optional<double> v, int64_t now) const {
    AlertTransition tr;
    tr.kind = kind;
    tr.rule = in.st.rule;
    tr.target = in.st.target;
    tr.severity = in.st.severity;
    tr.labels = in.st.labels;
    tr.annotations = in.annotations;
    tr.value = v;
    tr.starts_at_ms = in.st.firing_since_ms.value_or(now);
    if (kind == AlertTransition::Kind::kResolved) tr.ends_at_ms = now;
    tr.fingerprint = in.fingerprint;
    return tr;
  }

  std::vector<AlertTransition> evaluate(int64_t now, const Snapshot& snap,
                                        const std::vector<Finding>& active,
                                        const std::vector<Event>& events) {
    last_now_ms = now;
    std::vector<AlertTransition> out;
    ingest(now, snap, events, out);
    // Active findings by (code, track key); the first one of each pair speaks for it.
    std::map<std::pair<std::string, std::string>, const Finding*> found;
    for (const Finding& f : active) {
      Track& t = track_for(f.pci_bus_id, f.gpu);
      found.emplace(std::make_pair(f.code, t.target.key), &f);
    }
    for (const AlertRule& r : rules) {
      const auto eval_on = [&](const Track& t) {
        if (r.finding) {
          const auto it = found.find({*r.finding, t.target.key});
          const bool on = it != found.end();
          step(r, t, on ? 1.0 : 0.0, on, on, on ? it->second : nullptr, now, r.window, out);
          return;
        }
        const MetricInput mi{t, now, r.window};
        const std::optional<double> v = compute_metric(*r.metric, mi).value_or(std::nullopt);
        const bool fire = v && compare(r.op, *v, r.threshold);
        const bool keep = v && compare(r.op, *v, r.clear_threshold.value_or(r.threshold));
        step(r, t, v, fire, keep, nullptr, now, r.window, out);
      };
      for (const auto& [k, t] : tracks) eval_on(t);
      if (r.finding) eval_on(host);
    }
    return out;
  }
};

AlertEngine::AlertEngine(std::vector<AlertRule> rules)
    : impl_(std::make_unique<Impl>(std::move(rules))) {}
AlertEngine::~AlertEngine() = default;

std::vector<AlertTransition> AlertEngine::evaluate(int64_t now_ms, const Snapshot& snap,
                                                   const std::vector<Finding>& active,
                                                   const std::vector<Event>& new_events) {
  std::lock_guard lock(mu_);
  return impl_->evaluate(now_ms, snap, active, new_events);
}

std::vector<AlertTransition> AlertEngine::replace_rules(int64_t now_ms,
                                                        std::vector<AlertRule> rules) {
  std::lock_guard lock(mu_);
  std::set<std::string> names;
  for (const AlertRule& r : rules) names.insert(r.name);
  std::vector<AlertTransition> out;
  for (auto it = impl_->instances.begin(); it != impl_->instances.end();) {
    if (names.count(it->first.first)) {
      ++it;
      continue;
    }
    if (it->second.st.status == AlertStatus::kFiring) {
      out.push_back(impl_->transition(it->second, AlertTransition::Kind::kResolved,
                                      it->second.st.value, now_ms));
    }
    it = impl_->instances.erase(it);
  }
  impl_->rules = std::move(rules);
  impl_->recompute_window();
  return out;
}

void AlertEngine::restore(const std::vector<AlertTransition>& firing, std::vector<Event> events) {
  std::lock_guard lock(mu_);
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.time_ms.value_or(0) < b.time_ms.value_or(0);
  });
  impl_->replay = std::move(events);
  for (const AlertTransition& t : firing) {
    Impl::Instance& in = impl_->instances[{t.rule, t.target.key}];
    in.st.rule = t.rule;
    in.st.target = t.target;
    in.st.severity = t.severity;
    in.st.status = AlertStatus::kFiring;
    in.st.active_since_ms = t.starts_at_ms;
    in.st.firing_since_ms = t.starts_at_ms;
    in.st.labels = t.labels;
    in.annotations = t.annotations;
    in.fingerprint = fingerprint(t.rule, t.target.key);
  }
}

std::vector<AlertTransition> AlertEngine::firing() const {
  std::lock_guard lock(mu_);
  std::vector<AlertTransition> out;
  for (const auto& [k, in] : impl_->instances) {
    if (in.st.status != AlertStatus::kFiring) continue;
    out.push_back(impl_->transition(in, AlertTransition::Kind::kFiring, in.st.value,
                                    in.st.firing_since_ms.value_or(in.st.last_eval_ms)));
  }
  return out;
}

std::vector<AlertState> AlertEngine::states() const {
  std::lock_guard lock(mu_);
  std::vector<AlertState> out;
  out.reserve(impl_->instances.size());
  for (const auto& [k, in] : impl_->instances) out.push_back(in.st);
  return out;
}

std::vector<AlertRule> AlertEngine::rules() const {
  std::lock_guard lock(mu_);
  return impl_->rules;
}

std::optional<double> AlertEngine::metric_value(std::string_view metric,
                                                const std::string& target_key,
                                                std::chrono::milliseconds window) const {
  std::lock_guard lock(mu_);
  const auto it = impl_->tracks.find(target_key);
  if (it == impl_->tracks.end()) return std::nullopt;
  return compute_metric(metric, MetricInput{it->second, impl_->last_now_ms, window})
      .value_or(std::nullopt);
}

std::string_view alert_status_name(AlertStatus s) {
  switch (s) {
    case AlertStatus::kInactive:
      return "inactive";
    case AlertStatus::kPending:
      return "pending";
    case AlertStatus::kFiring:
      return "firing";
  }
  return "?";
}

}  // namespace gw::alert
