// The daemon's TOML config: [serve], [storage], [sampling] are read here; [[alert]] and
// [[sink]] are handed as a table to the alert module's parser. Every default is documented in
// docs/serve.md; every error names the file, line and key.
#pragma once

#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "serve/auth.h"

namespace gw::serve {

struct ServeSection {
  std::string listen = "127.0.0.1:9400";    // dcgm-exporter's port, loopback only by default
  int64_t stale_after_ms = 10'000;          // /healthz fails when a GPU's data is older
  std::string hostname_label = "Hostname";  // released dcgm-exporter spelling ("hostname" on main)
  std::optional<std::string> api_token;     // enables POST /api/reload with "Bearer <token>"
  int http_threads = 8;                     // a browser alone keeps up to 6 connections open
  AuthMode auth = AuthMode::kAuto;          // when reads need the token (serve/auth.h)
  std::vector<std::string> open_paths = AuthPolicy{}.open_paths;  // GET without a token
};

struct StorageSection {
  bool enabled = true;
  std::string path;  // empty: the state directory's history.db (see default_db_path)
  int64_t raw_retention_ms = 24LL * 3600 * 1000;
  int64_t rollup_retention_ms = 30LL * 24 * 3600 * 1000;
  uint64_t max_bytes = 1ULL << 30;
  int64_t compact_interval_ms = 60'000;
  // A new database (and its -wal, -shm) and the folders made for it: private unless widened,
  // e.g. file_mode = "0640" for a group that runs `gpuwarden history`.
  unsigned file_mode = 0600;
  unsigned dir_mode = 0700;
};

struct SamplingSection {
  int64_t interval_ms = 1000;
  int64_t gpu_deadline_ms = 2000;  // one NVML call longer than this marks its GPU hung
  int64_t diagnose_interval_ms = 5000;
  int64_t diagnose_window_ms = 5 * 60'000;  // the doctor rules look at this much history
  int64_t event_window_ms = 10 * 60'000;    // an Xid keeps its finding active this long
  std::string kernel_log = "/dev/kmsg";     // or a file that grows (tests), or "" for none
  bool nvml_events = true;
  // dcgm-exporter-style job mapping: one file per GPU index holding job ids (job_mapping.h);
  // written by `gpuwarden slurm prolog` and the queue; "" for none.
  std::string job_mapping_dir = "/run/gpuwarden/jobs";
};

// [queue]: the job queue (docs/queue.md). `serve --socket` and `--queue-policy` override.
struct QueueSection {
  std::string socket;  // "": no queue unless --socket is given
  std::string policy = "fcfs";
  int64_t fairshare_half_life_ms = 7LL * 24 * 3600 * 1000;
  std::string admin_group;             // may drain/resume and manage any job; "": root only
  std::vector<unsigned> include_gpus;  // empty: every GPU
  std::vector<unsigned> exclude_gpus;
  int64_t kill_grace_ms = 10'000;    // SIGTERM at the time limit, SIGKILL this much later
  int64_t share_warmup_ms = 60'000;  // --gpu-mem sharing: how long a GPU's jobs run first
  bool operator==(const QueueSection&) const = default;
};

struct DaemonConfig {
  ServeSection serve;
  StorageSection storage;
  SamplingSection sampling;
  QueueSection queue;
  toml::table alerting;  // the [[alert]] and [[sink]] arrays, for the alert module
  std::string origin;    // the file it came from ("" for built-in defaults)
};

// Parses config text; `origin` names the file in errors ("gpuwarden.toml:12:3: ...").
Result<DaemonConfig> parse_config(std::string_view text, std::string_view origin);
// A reload reads the file only once nothing has written it for `quiet_ms` (a deploy writing it
// in pieces), and refuses it (config.changing) when it keeps changing for `max_wait_ms` or
// changes while being read. 0: read at once (startup, where a restart loop retries anyway).
struct ConfigReadTiming {
  int quiet_ms = 0;
  int max_wait_ms = 3000;
};
Result<DaemonConfig> load_config(const std::string& path, ConfigReadTiming timing = {});

// "500ms", "30s", "5m", "24h", "30d", "1h30m" -> milliseconds.
Result<int64_t> parse_duration_ms(std::string_view text);
// "512MiB", "1GiB", "10MB", "4096" (bytes) -> bytes.
Result<uint64_t> parse_bytes(std::string_view text);
// "1h30m" style text for a duration (docs, API).
std::string format_duration(int64_t ms);

// $STATE_DIRECTORY/history.db (systemd), else $XDG_STATE_HOME/gpuwarden/history.db, else
// ~/.local/state/gpuwarden/history.db, else /var/lib/gpuwarden/history.db.
std::string default_db_path();

}  // namespace gw::serve
