#include "sources/capture_gzip.h"

#include <zlib.h>

#include <algorithm>
#include <limits>

namespace gw {

bool is_gzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

namespace {

// Hands zlib at most uInt's range at a time (a mapping may exceed 4 GiB).
void feed(z_stream& zs, std::string_view data, size_t& fed) {
  if (zs.avail_in != 0 || fed >= data.size()) return;
  const size_t n = std::min<size_t>(data.size() - fed, std::numeric_limits<uInt>::max());
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + fed));
  zs.avail_in = static_cast<uInt>(n);
  fed += n;
}

}  // namespace

Result<std::string> gunzip_capture(std::string_view data, std::string_view origin,
                                   size_t max_bytes) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 16) != Z_OK)  // 15 + 16: the gzip wrapper only
    return make_error("capture.gzip", "cannot initialise zlib", std::string(origin));
  std::string out;
  std::string chunk(size_t{1} << 16, '\0');
  size_t fed = 0;
  int rc = Z_OK;
  while (true) {
    feed(zs, data, fed);
    zs.next_out = reinterpret_cast<Bytef*>(chunk.data());
    zs.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) break;
    out.append(chunk.data(), chunk.size() - zs.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&zs);
      return make_error("capture.too_large",
                        "decompresses to more than " + std::to_string(max_bytes) + " bytes",
                        std::string(origin));
    }
    if (rc == Z_STREAM_END) {
      feed(zs, data, fed);
      if (zs.avail_in == 0 || !is_gzip({reinterpret_cast<const char*>(zs.next_in), zs.avail_in}))
        break;
      inflateReset(&zs);  // another member follows
    }
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END)
    return make_error("capture.gzip",
                      std::string("corrupt or truncated gzip data (zlib: ") +
                          (zs.msg ? zs.msg : std::to_string(rc)) + ")",
                      std::string(origin));
  return out;
}

}  // namespace gw
