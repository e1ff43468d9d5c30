// A gpuwarden-http.so from "another build": the table's first two fields as the loader reads
// them (cli/http_commands.h), with an ABI and a version no build has, and no commands.
#include <cstdint>

namespace {
struct StaleTable {
  uint64_t abi;
  const char* version;
  void* commands[4];
};
constexpr StaleTable kStale{0, "0.0.0-stale", {}};
}  // namespace

extern "C" __attribute__((visibility("default"))) const StaleTable* gw_http_commands() {
  return &kStale;
}
