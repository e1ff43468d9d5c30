// The alert configuration from toml++ nodes the daemon already parsed: it hands over the
// `[[alert]]` and `[[sink]]` arrays of its config file. Kept apart from alert.h so that only
// the files that parse TOML pay for the toml++ header.
#pragma once

#include <toml++/toml.h>

#include <string_view>

#include "alert/alert.h"

namespace gw::alert {

// `alerts` / `sinks`: the arrays of tables under those keys (nullptr when absent).
// `source_name` prefixes every error ("gpuwarden.toml:12: ...").
Result<AlertConfig> alert_config_from_toml(const toml::array* alerts, const toml::array* sinks,
                                           std::string_view source_name);

// Same, from the whole parsed file (reads its "alert" and "sink" keys; a key of the wrong
// type is an error).
Result<AlertConfig> alert_config_from_toml(const toml::table& root, std::string_view source_name);

}  // namespace gw::alert
