#include "sim/trace_io.h"

#include <fmt/format.h>
#include <zlib.h>

#include "core/input_file.h"

namespace gw::sim {

namespace fs = std::filesystem;

namespace {

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

}  // namespace

Result<std::string> gunzip(std::string_view data, std::string_view what) {
  z_stream zs{};
  // 15 + 16: gzip wrapper only; concatenated members are handled by the reset loop below.
  if (inflateInit2(&zs, 15 + 16) != Z_OK)
    return make_error("trace.io", "cannot initialise zlib", std::string(what));
  std::string out;
  std::string chunk(size_t{1} << 16, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  zs.avail_in = static_cast<uInt>(data.size());
  int rc = Z_OK;
  while (true) {
    zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out.append(chunk.data(), chunk.size() - zs.avail_out);
    if (out.size() > kMaxTraceBytes) {
      inflateEnd(&zs);
      return make_error("trace.too_large",
                        fmt::format("decompresses to more than {} bytes", kMaxTraceBytes),
                        std::string(what));
    }
    if (rc == Z_STREAM_END) {
      if (zs.avail_in == 0 || !is_gzip({reinterpret_cast<const char*>(zs.next_in), zs.avail_in}))
        break;
      inflateReset(&zs);  // another gzip member follows (`cat a.gz b.gz`)
    }
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END)
    return make_error("trace.io",
                      fmt::format("corrupt or truncated gzip data (zlib: {})",
                                  zs.msg ? zs.msg : std::to_string(rc)),
                      std::string(what));
  return out;
}

Result<std::string> read_trace_file(const fs::path& p) {
  // The shared reader refuses directories, devices and sockets, bounds pipes in time and size
  // and maps regular files; only the size limit is the trace's own.
  InputLimits limits;
  limits.max_file_bytes = kMaxTraceBytes;
  limits.max_stream_bytes = kMaxTraceBytes;
  auto in = read_input(p.string(), limits);
  if (!in) {
    Error e = in.error();
    if (e.code == "input.too_large") e.code = "trace.too_large";
    return e;
  }
  if (is_gzip(in->text())) return gunzip(in->text(), p.string());
  return std::string(in->text());
}

fs::path find_plain_or_gz(const fs::path& dir, std::string_view name) {
  std::error_code ec;
  const fs::path plain = dir / std::string(name);
  if (fs::is_regular_file(plain, ec)) return plain;
  const fs::path gz = dir / (std::string(name) + ".gz");
  if (fs::is_regular_file(gz, ec)) return gz;
  return {};
}

std::string strip_gz(std::string name) {
  if (name.ends_with(".gz")) name.resize(name.size() - 3);
  return name;
}

}  // namespace gw::sim
