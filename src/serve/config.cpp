#include "serve/config.h"

#include <sys/stat.h>
#include <time.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "core/input_file.h"
#include "core/toml_text.h"
#include "sched/policy.h"

namespace gw::serve {
namespace {

std::string where(std::string_view origin, const toml::node& n, std::string_view key) {
  std::string w(origin.empty() ? "config" : origin);
  const auto& src = n.source();
  if (src.begin.line > 0)
    w += ":" + std::to_string(src.begin.line) + ":" + std::to_string(src.begin.column);
  return w + ": " + std::string(key);
}

Error bad(std::string_view origin, const toml::node& n, std::string_view key, std::string what) {
  return make_error("config.invalid", std::move(what), where(origin, n, key));
}

// Reads one section, refusing unknown keys (a typo must not silently keep a default).
class Section {
 public:
  Section(const toml::table& t, std::string name, std::string_view origin)
      : t_(t), name_(std::move(name)), origin_(origin) {}

  Status check_keys(std::initializer_list<std::string_view> known) const {
    const std::set<std::string_view> k(known);
    for (const auto& [key, node] : t_) {
      if (k.count(key.str()) == 0) {
        std::string list;
        for (std::string_view s : known) list += (list.empty() ? "" : ", ") + std::string(s);
        return bad(origin_, node, name_ + "." + std::string(key.str()),
                   "unknown key (known: " + list + ")");
      }
    }
    return {};
  }

  Status duration(const char* key, int64_t& out, int64_t min_ms = 1) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) return {};
    const auto* s = n->as_string();
    if (s == nullptr)
      return bad(origin_, *n, name_ + "." + key,
                 "expected a duration string such as \"30s\", \"5m\" or \"24h\"");
    auto ms = parse_duration_ms(s->get());
    if (!ms) return bad(origin_, *n, name_ + "." + key, ms.error().message);
    if (*ms < min_ms)
      return bad(origin_, *n, name_ + "." + key,
                 "must be at least " + format_duration(min_ms) + ", got \"" + s->get() + "\"");
    out = *ms;
    return {};
  }

  Status string(const char* key, std::string& out) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) return {};
    const auto* s = n->as_string();
    if (s == nullptr) return bad(origin_, *n, name_ + "." + key, "expected a string");
    out = s->get();
    return {};
  }

  Status boolean(const char* key, bool& out) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) return {};
    const auto* b = n->as_boolean();
    if (b == nullptr) return bad(origin_, *n, name_ + "." + key, "expected true or false");
    out = b->get();
    return {};
  }

  Status integer(const char* key, int& out, int lo, int hi) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) return {};
    const auto* i = n->as_integer();
    if (i == nullptr || i->get() < lo || i->get() > hi)
      return bad(origin_, *n, name_ + "." + key,
                 "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    out = static_cast<int>(i->get());
    return {};
  }

  // "0640": an octal permission string (a TOML integer 0640 would be decimal 640).
  Status mode(const char* key, unsigned& out) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) return {};
    const auto* s = n->as_string();
    unsigned v = 0;
    const std::string text = s != nullptr ? s->get() : std::string();
    const char* b = text.data();
    const char* e = b + text.size();
    if (s == nullptr || text.size() < 3 || text.size() > 4 ||
        std::from_chars(b, e, v, 8).ptr != e || v > 0777)
      return bad(origin_, *n, name_ + "." + key,
                 "expected an octal permission string such as \"0640\"");
    out = v;
    return {};
  }

  Status bytes(const char* key, uint64_t& out) const {
    const toml::node* n = t_.get(key);
    if (n == nullptr) return {};
    Result<uint64_t> b = make_error("config.invalid", "expected a size such as \"512MiB\"");
    if (const auto* s = n->as_string()) b = parse_bytes(s->get());
    if (const auto* i = n->as_integer(); i != nullptr && i->get() > 0)
      b = static_cast<uint64_t>(i->get());
    if (!b) return bad(origin_, *n, name_ + "." + key, b.error().message);
    if (*b < 64 * 1024) return bad(origin_, *n, name_ + "." + key, "must be at least 64KiB");
    out = *b;
    return {};
  }

 private:
  const toml::table& t_;
  std::string name_;
  std::string_view origin_;
};

Status read_listen(const std::string& listen, std::string_view origin, const toml::node& n) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos && colon > 0) {
    const char* b = listen.data() + colon + 1;
    const char* e = listen.data() + listen.size();
    if (std::from_chars(b, e, port).ptr != e) port = -1;
  }
  if (port < 0 || port > 65535)
    return bad(origin, n, "serve.listen",
               "expected ADDRESS:PORT such as \"127.0.0.1:9400\", got \"" + listen + "\"");
  return {};
}

// A TOML array of GPU indices, "[0, 1, 2]".
Status read_gpu_list(const toml::table& t, const char* key, std::string_view origin,
                     std::vector<unsigned>& out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return {};
  const std::string k = std::string("queue.") + key;
  const toml::array* a = n->as_array();
  if (a == nullptr) return bad(origin, *n, k, "expected a list of GPU indices such as [0, 1]");
  out.clear();
  for (const toml::node& e : *a) {
    const auto* i = e.as_integer();
    if (i == nullptr || i->get() < 0 || i->get() > 1023)
      return bad(origin, e, k, "expected GPU indices from 0 to 1023");
    out.push_back(static_cast<unsigned>(i->get()));
  }
  return {};
}

Status read_queue(const toml::table& t, std::string_view origin, QueueSection& q) {
  Section s(t, "queue", origin);
  for (Status st :
       {s.check_keys({"socket", "policy", "fairshare_half_life", "admin_group", "include_gpus",
                      "exclude_gpus", "kill_grace", "share_warmup"}),
        s.string("socket", q.socket), s.string("policy", q.policy),
        s.duration("fairshare_half_life", q.fairshare_half_life_ms, 60'000),
        s.string("admin_group", q.admin_group), s.duration("kill_grace", q.kill_grace_ms, 0),
        s.duration("share_warmup", q.share_warmup_ms, 0),
        read_gpu_list(t, "include_gpus", origin, q.include_gpus),
        read_gpu_list(t, "exclude_gpus", origin, q.exclude_gpus)})
    if (!st) return st;
  if (auto p = sched::make_policy(q.policy); !p)
    return bad(origin, *t.get("policy"), "queue.policy", p.error().message);
  if (!q.socket.empty() && q.socket.front() != '/')
    return bad(origin, *t.get("socket"), "queue.socket", "expected an absolute path");
  return {};
}

// serve.auth and serve.open_paths (who may read without the token, serve/auth.h).
Status read_auth(const toml::table& t, std::string_view origin, ServeSection& out) {
  if (const toml::node* n = t.get("auth")) {
    const auto* s = n->as_string();
    const auto mode = s != nullptr ? parse_auth_mode(s->get()) : std::nullopt;
    if (!mode) return bad(origin, *n, "serve.auth", "expected \"auto\", \"token\" or \"open\"");
    out.auth = *mode;
  }
  if (const toml::node* n = t.get("open_paths")) {
    const auto* a = n->as_array();
    if (a == nullptr) return bad(origin, *n, "serve.open_paths", "expected an array of paths");
    out.open_paths.clear();
    for (const toml::node& e : *a) {
      const auto* s = e.as_string();
      if (s == nullptr || s->get().empty() || s->get()[0] != '/')
        return bad(origin, e, "serve.open_paths", "expected paths such as \"/metrics\"");
      out.open_paths.push_back(s->get());
    }
  }
  return {};
}

}  // namespace

Result<int64_t> parse_duration_ms(std::string_view text) {
  const std::string t(text);
  auto fail = [&] {
    return make_error("config.bad_duration",
                      "bad duration \"" + t +
                          "\" (write a number with a unit: ms, s, m, h or d, e.g. \"30s\", "
                          "\"1h30m\")");
  };
  if (text.empty()) return fail();
  int64_t total = 0;
  size_t p = 0;
  while (p < text.size()) {
    size_t q = p;
    while (q < text.size() && (std::isdigit(static_cast<unsigned char>(text[q])) || text[q] == '.'))
      ++q;
    if (q == p) return fail();
    double v = 0;
    const auto r = std::from_chars(text.data() + p, text.data() + q, v);
    if (r.ec != std::errc() || r.ptr != text.data() + q) return fail();
    size_t u = q;
    while (u < text.size() && std::isalpha(static_cast<unsigned char>(text[u]))) ++u;
    const std::string_view unit = text.substr(q, u - q);
    double scale = 0;
    if (unit == "ms")
      scale = 1;
    else if (unit == "s")
      scale = 1000;
    else if (unit == "m")
      scale = 60'000;
    else if (unit == "h")
      scale = 3'600'000;
    else if (unit == "d")
      scale = 86'400'000;
    else
      return fail();
    const double ms = v * scale;
    if (!(ms >= 0) || ms > 1e15) return fail();
    total += static_cast<int64_t>(ms);
    p = u;
  }
  return total;
}

Result<uint64_t> parse_bytes(std::string_view text) {
  const std::string t(text);
  size_t q = 0;
  while (q < text.size() && std::isdigit(static_cast<unsigned char>(text[q]))) ++q;
  uint64_t v = 0;
  if (q == 0 || std::from_chars(text.data(), text.data() + q, v).ec != std::errc())
    return make_error("config.bad_size", "bad size \"" + t + "\" (e.g. \"512MiB\", \"2GiB\")");
  const std::string_view unit = text.substr(q);
  uint64_t scale = 0;
  if (unit.empty() || unit == "B")
    scale = 1;
  else if (unit == "KiB")
    scale = 1ULL << 10;
  else if (unit == "MiB")
    scale = 1ULL << 20;
  else if (unit == "GiB")
    scale = 1ULL << 30;
  else if (unit == "KB")
    scale = 1000;
  else if (unit == "MB")
    scale = 1000'000;
  else if (unit == "GB")
    scale = 1000'000'000;
  else
    return make_error("config.bad_size", "bad size \"" + t + "\": unknown unit \"" +
                                             std::string(unit) +
                                             "\" (B, KiB, MiB, GiB, KB, MB, GB)");
  return v * scale;
}

std::string format_duration(int64_t ms) {
  if (ms % 86'400'000 == 0 && ms > 0) return std::to_string(ms / 86'400'000) + "d";
  if (ms % 3'600'000 == 0 && ms > 0) return std::to_string(ms / 3'600'000) + "h";
  if (ms % 60'000 == 0 && ms > 0) return std::to_string(ms / 60'000) + "m";
  if (ms % 1000 == 0 && ms > 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

namespace {

Status read_serve(const toml::table& t, std::string_view origin, ServeSection& c) {
  Section s(t, "serve", origin);
  for (Status st : {s.check_keys({"listen", "stale_after", "hostname_label", "api_token",
                                  "http_threads", "auth", "open_paths"}),
                    s.string("listen", c.listen), s.duration("stale_after", c.stale_after_ms),
                    s.string("hostname_label", c.hostname_label),
                    s.integer("http_threads", c.http_threads, 1, 64)})
    if (!st) return st;
  if (const toml::node* n = t.get("listen"))
    if (Status st = read_listen(c.listen, origin, *n); !st) return st;
  if (const toml::node* n = t.get("hostname_label");
      n != nullptr && c.hostname_label != "Hostname" && c.hostname_label != "hostname")
    return bad(origin, *n, "serve.hostname_label", "expected \"Hostname\" or \"hostname\"");
  std::string token;
  if (Status st = s.string("api_token", token); !st) return st;
  if (!token.empty()) c.api_token = token;
  if (Status st = read_auth(t, origin, c); !st) return st;
  return {};
}

Status read_storage(const toml::table& t, std::string_view origin, StorageSection& c) {
  Section s(t, "storage", origin);
  for (Status st : {s.check_keys({"enabled", "path", "raw_retention", "rollup_retention",
                                  "max_size", "compact_interval", "file_mode", "dir_mode"}),
                    s.mode("file_mode", c.file_mode), s.mode("dir_mode", c.dir_mode),
                    s.boolean("enabled", c.enabled), s.string("path", c.path),
                    s.duration("raw_retention", c.raw_retention_ms, 60'000),
                    s.duration("rollup_retention", c.rollup_retention_ms, 60'000),
                    s.bytes("max_size", c.max_bytes),
                    s.duration("compact_interval", c.compact_interval_ms, 100)})
    if (!st) return st;
  // The daemon must reach its own files; the mode narrows who else may.
  if ((c.file_mode & 0600) != 0600)
    return bad(origin, *t.get("file_mode"), "storage.file_mode",
               "must let the owner read and write (0600 at least)");
  if ((c.dir_mode & 0700) != 0700)
    return bad(origin, *t.get("dir_mode"), "storage.dir_mode",
               "must let the owner read, write and enter (0700 at least)");
  if (c.rollup_retention_ms < c.raw_retention_ms)
    return bad(origin, t, "storage.rollup_retention",
               "must not be shorter than storage.raw_retention");
  return {};
}

Status read_sampling(const toml::table& t, std::string_view origin, SamplingSection& c) {
  Section s(t, "sampling", origin);
  for (Status st :
       {s.check_keys({"interval", "gpu_deadline", "diagnose_interval", "diagnose_window",
                      "event_window", "kernel_log", "nvml_events", "job_mapping_dir"}),
        s.duration("interval", c.interval_ms, 50),
        s.duration("gpu_deadline", c.gpu_deadline_ms, 10),
        s.duration("diagnose_interval", c.diagnose_interval_ms, 50),
        s.duration("diagnose_window", c.diagnose_window_ms, 100),
        s.duration("event_window", c.event_window_ms, 100), s.string("kernel_log", c.kernel_log),
        s.boolean("nvml_events", c.nvml_events), s.string("job_mapping_dir", c.job_mapping_dir)})
    if (!st) return st;
  return {};
}

}  // namespace

Result<DaemonConfig> parse_config(std::string_view text, std::string_view origin) {
  DaemonConfig c;
  c.origin = std::string(origin);
  auto parsed = parse_toml_text(text, origin);
  if (!parsed) return parsed.error();
  const toml::table& root = *parsed;
  for (const auto& [key, node] : root) {
    const std::string_view k = key.str();
    if (k == "alert" || k == "sink") {
      if (!node.is_array_of_tables())
        return bad(origin, node, k, "expected [[" + std::string(k) + "]] tables");
      c.alerting.insert(k, node);
      continue;
    }
    // [check] and [slurm] belong to `gpuwarden check` and the Slurm hooks (src/slurm), which
    // check their keys; the daemon only lets them pass.
    if (k != "serve" && k != "storage" && k != "sampling" && k != "queue" && k != "check" &&
        k != "slurm")
      return bad(origin, node, k,
                 "unknown section (known: [serve], [storage], [sampling], [queue], [check], "
                 "[slurm], [[alert]], [[sink]])");
    if (!node.is_table()) return bad(origin, node, k, "expected a [" + std::string(k) + "] table");
  }
  if (const auto* t = root["serve"].as_table())
    if (Status st = read_serve(*t, origin, c.serve); !st) return st.error();
  if (const auto* t = root["storage"].as_table())
    if (Status st = read_storage(*t, origin, c.storage); !st) return st.error();
  if (const auto* t = root["sampling"].as_table())
    if (Status st = read_sampling(*t, origin, c.sampling); !st) return st.error();
  if (const auto* t = root["queue"].as_table())
    if (Status st = read_queue(*t, origin, c.queue); !st) return st.error();
  return c;
}

namespace {

struct FileStamp {
  bool ok = false;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileStamp& o) const {
    return ok == o.ok && dev == o.dev && ino == o.ino && size == o.size && mtime_ns == o.mtime_ns;
  }
};

FileStamp stamp(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {true, st.st_dev, st.st_ino, st.st_size,
          int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
}

int64_t now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Waits until the file was last changed at least quiet_ms ago; false when it keeps changing.
bool wait_until_quiet(const std::string& path, ConfigReadTiming t) {
  const int64_t quiet = int64_t(t.quiet_ms) * 1'000'000;
  const int64_t give_up = now_ns() + int64_t(t.max_wait_ms) * 1'000'000;
  for (;;) {
    const int64_t age = now_ns() - stamp(path).mtime_ns;
    if (age >= quiet) return true;
    if (now_ns() + (quiet - age) > give_up) return false;
    std::this_thread::sleep_for(std::chrono::nanoseconds(quiet - age));
  }
}

}  // namespace

Result<DaemonConfig> load_config(const std::string& path, ConfigReadTiming timing) {
  // A config is a regular file. A directory, a device (/dev/zero) or a FIFO is refused at
  // once, before anything reads it (the input rules every other reader follows).
  const InputKind kind = input_kind(path);
  if (kind == InputKind::kMissing) return make_error("config.unreadable", "no such file", path);
  if (kind != InputKind::kRegular)
    return make_error("config.not_a_file",
                      "is " + std::string(input_kind_name(kind)) + ", not a config file", path);
  const auto changing = [&] {
    return make_error("config.changing",
                      "is still being written (changed within the last " +
                          std::to_string(timing.quiet_ms) + " ms for " +
                          std::to_string(timing.max_wait_ms) +
                          " ms, or while it was read); the running config stays: reload again "
                          "once the deploy is done",
                      path);
  };
  if (timing.quiet_ms > 0 && !wait_until_quiet(path, timing)) return changing();
  const FileStamp before = stamp(path);
  InputLimits limits;
  limits.max_file_bytes = 16ull << 20;  // a config is a few KiB; a runaway file is an error
  auto in = read_input(path, limits);
  if (!in) return make_error("config.unreadable", in.error().message, path);
  if (timing.quiet_ms > 0 && !(stamp(path) == before)) return changing();
  const std::string_view text = in->text();
  // An empty file is what a half-done deploy leaves: it would silently drop every setting.
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return make_error("config.empty",
                      "is empty (a deploy in progress?); an empty config is refused, write at "
                      "least a comment to run on the defaults",
                      path);
  return parse_config(text, path);
}

std::string default_db_path() {
  auto env = [](const char* k) -> std::string {
    const char* v = std::getenv(k);
    return v != nullptr ? v : "";
  };
  if (std::string d = env("STATE_DIRECTORY"); !d.empty()) {
    // systemd may list several directories separated by ':'; the first is ours.
    return d.substr(0, d.find(':')) + "/history.db";
  }
  if (std::string d = env("XDG_STATE_HOME"); !d.empty()) return d + "/gpuwarden/history.db";
  if (std::string h = env("HOME"); !h.empty() && h != "/")
    return h + "/.local/state/gpuwarden/history.db";
  return "/var/lib/gpuwarden/history.db";
}

}  // namespace gw::serve
