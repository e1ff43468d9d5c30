// The daemon's side of the alert module (src/alert): builds the engine and the notifier from
// the config's [[alert]]/[[sink]] tables, runs one evaluation per round, turns transitions into
// store records and metric series, and swaps rules and sinks on reload.
#pragma once

#include <toml++/toml.h>

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "alert/alert.h"
#include "serve/metrics.h"
#include "store/store.h"

namespace gw::serve {

class AlertBridge {
 public:
  // Without [[alert]] tables the shipped default rules apply; without [[sink]] tables alerts
  // go to the daemon's log. Errors are the alert parser's (file, line, rule, key).
  static Result<alert::AlertConfig> parse(const toml::table& alerting, std::string_view origin);
  static std::unique_ptr<AlertBridge> create(alert::AlertConfig config,
                                             std::function<void(std::string_view)> log,
                                             std::string external_url);
  ~AlertBridge();
  AlertBridge(const AlertBridge&) = delete;
  AlertBridge& operator=(const AlertBridge&) = delete;

  // One evaluation; transitions are handed to the sinks (asynchronously) and returned.
  std::vector<store::AlertTransitionRecord> evaluate(int64_t now_ms, const Snapshot& snap,
                                                     const std::vector<Finding>& active,
                                                     const std::vector<Event>& new_events);
  // New rules and sinks (already validated by parse()). Firing alerts of removed rules
  // resolve; the old sinks get a moment to deliver what they hold.
  std::vector<store::AlertTransitionRecord> replace(int64_t now_ms, alert::AlertConfig config);

  // After a restart, before the first evaluate(): the stored firing alerts fire on (no new
  // firing message; Alertmanager sinks re-post them at once and keep re-sending) until their
  // condition is found clear; `window` is the stored event window with its own times.
  void restore(const std::vector<store::AlertTransitionRecord>& firing, std::vector<Event> window);

  std::vector<AlertSeries> series() const;
  nlohmann::json rules_json() const;
  nlohmann::json sinks_json() const;
  // Delivers what is queued (bounded), then stops the sink workers.
  void shutdown(std::chrono::milliseconds deadline);

 private:
  AlertBridge() = default;
  std::vector<store::AlertTransitionRecord> submit(std::vector<alert::AlertTransition> ts);
  std::unique_ptr<alert::AlertEngine> engine_;
  std::unique_ptr<alert::Notifier> notifier_;
  std::function<void(std::string_view)> log_;
  std::string external_url_;
};

}  // namespace gw::serve
