#include "cli/http_commands.h"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <ostream>
#include <system_error>
#include <vector>

#include "core/text_safety.h"
#include "sources/gpu_source.h"

namespace gw::cli {
namespace {

namespace fs = std::filesystem;

// Where the plugin is looked for, in order: beside the binary (a build tree), then where the
// package installs it. Never a path from the environment or the build machine: whatever is
// found runs as the caller, root for the daemon.
std::vector<fs::path> plugin_candidates() {
  const auto dir = exe_dir();
  if (!dir) return {};
  return {*dir / kHttpPluginName, *dir / ".." / "lib" / "gpuwarden" / kHttpPluginName};
}

struct Loaded {
  const HttpCommands* table = nullptr;
  std::string error;  // why not, when table is null
};

Loaded open_plugin() {
  std::string tried;
  for (const fs::path& p : plugin_candidates()) {
    const std::string path = p.lexically_normal().string();
    std::error_code ec;
    if (!fs::exists(p, ec)) {
      tried += (tried.empty() ? "" : ", ") + path;
      continue;
    }
    // RTLD_LOCAL: the plugin's copies of the project's code stay its own.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return {nullptr, "cannot open " + path + ": " + dlerror()};
    void* entry = dlsym(handle, kHttpCommandsSymbol);
    if (entry == nullptr) return {nullptr, path + " has no " + kHttpCommandsSymbol};
    const auto* table = reinterpret_cast<const HttpCommands* (*)()>(entry)();
    if (table == nullptr || table->abi != kHttpCommandsAbi ||
        std::strcmp(table->version, GW_VERSION) != 0)
      return {nullptr, path + " is from another build of gpuwarden (version " +
                           (table ? table->version : "?") + "; this one is " GW_VERSION ")"};
    return {table, {}};
  }
  return {nullptr, std::string(kHttpPluginName) + " not found (tried " + tried + ")"};
}

}  // namespace

const HttpCommands* http_commands(const char* command, const Io& io) {
  // Opened once: a process runs one command, and a handle that stays open costs nothing.
  static const Loaded loaded = open_plugin();
  if (loaded.table == nullptr)
    io.err << "gpuwarden " << command
           << ": the HTTP commands' plugin is unavailable: " << terminal_safe(loaded.error)
           << "; reinstall gpuwarden, or build the target gpuwarden (it builds the plugin)\n";
  return loaded.table;
}

}  // namespace gw::cli
