// toml++'s implementation, compiled once from Debian's headers (TOML_HEADER_ONLY=0 for every
// user, from gw_toml). Linked in rather than Debian's libtomlplusplus.so: that object needs
// libstdc++'s, and the binary carries its own C++ runtime (CMakeLists.txt). Every text reaches
// it through parse_toml_text (core/toml_text.h), which first turns away what toml++ 3.3 cannot
// read safely.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
