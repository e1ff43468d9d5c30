// Reads a gzip file (or a plain one: zlib passes it through) into memory for tests.
#pragma once

#include <zlib.h>

#include <optional>
#include <string>

namespace gw::sim::test {

inline std::optional<std::string> read_gz(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return std::nullopt;
  std::string out;
  char buf[1 << 16];
  int n = 0;
  while ((n = gzread(f, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  const bool ok = n == 0;
  gzclose(f);
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace gw::sim::test
