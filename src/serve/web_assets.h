// The dashboard's files (src/serve/web/), compiled in by src/diagnose/embed.cmake.
#pragma once

#include <string_view>

namespace gw {

std::string_view web_index_html();
std::string_view web_dashboard_js();
std::string_view web_dashboard_css();

}  // namespace gw
