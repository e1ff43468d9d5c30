#include "sim/trace_io.h"

#include <fmt/format.h>
#include <zlib.h>

#include <fstream>

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
  std::error_code ec;
  if (fs::is_directory(p, ec)) return make_error("trace.io", "is a folder, not a file", p.string());
  if (!fs::is_regular_file(p, ec))
    return make_error("trace.io", "not a regular file (a device, FIFO or socket)", p.string());
  const auto size = fs::file_size(p, ec);
  if (!ec && size > kMaxTraceBytes)
    return make_error("trace.too_large", fmt::format("larger than {} bytes", kMaxTraceBytes),
                      p.string());
  std::ifstream in(p, std::ios::binary);
  if (!in) return make_error("trace.io", "cannot open the file for reading", p.string());
  std::string text;
  if (!ec) text.resize(static_cast<size_t>(size));
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad() || static_cast<size_t>(in.gcount()) != text.size())
    return make_error("trace.io", "read error", p.string());
  if (is_gzip(text)) return gunzip(text, p.string());
  return text;
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
