// nvidia-bug-report.sh writes nvidia-bug-report.log.gz, and that is the file people attach:
// a capture that starts with the gzip magic is read through zlib, transparently.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "core/result.h"

namespace gw {

bool is_gzip(std::string_view data);

// The decompressed text of every gzip member in `data` (`cat a.gz b.gz` is two). Errors:
// capture.gzip (corrupt or truncated; the message says which), capture.too_large (more than
// `max_bytes` once decompressed: a bug report is tens of MB, a 4 GiB cap keeps a bomb out).
Result<std::string> gunzip_capture(std::string_view data, std::string_view origin,
                                   size_t max_bytes = size_t{4} << 30);

}  // namespace gw
