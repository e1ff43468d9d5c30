// Binding a dlopen'ed library's table of symbols (NVML, the CUDA driver, libcurl): each slot
// takes the first of its spellings the library exports (versioned first: nvmlInit_v2, then
// nvmlInit). `for_each(api, f)` calls f(slot, names, required) for every slot of the table.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "core/result.h"

namespace gw {

// dlopen(path, flags), or the error `code` at `path`: "cannot load <what> (<dlerror>)<then>",
// `then` saying what needs the library or what to try (it brings its own "; " or ": ").
inline Result<void*> open_library(const std::string& path, int flags, const char* code,
                                  const std::string& what, const std::string& then) {
  if (void* h = dlopen(path.c_str(), flags)) return h;
  const char* why = dlerror();
  return make_error(code, "cannot load " + what + " (" + std::string(why ? why : "") + ")" + then,
                    path);
}

// One resolved export: the function and the name it was found under (for messages).
template <class F>
struct Sym {
  F fn = nullptr;
  const char* name = "";
  explicit operator bool() const { return fn != nullptr; }
};

// Returns the required symbols the library lacks ("a, b"), empty when it is usable. A slot
// left unbound keeps its first spelling as its name, for messages.
template <class Api, class ForEach>
std::string bind_symbols(void* handle, Api& api, ForEach for_each) {
  std::string missing;
  for_each(api, [&](auto& slot, std::initializer_list<const char*> names, bool required) {
    for (const char* n : names) {
      if (void* p = dlsym(handle, n)) {
        // dlsym returns void*; POSIX guarantees it converts to a function pointer.
        slot.fn = reinterpret_cast<std::remove_reference_t<decltype(slot.fn)>>(p);
        slot.name = n;
        break;
      }
    }
    if (!slot && required) missing += std::string(missing.empty() ? "" : ", ") + *names.begin();
    if (!slot) slot.name = *names.begin();
  });
  return missing;
}

// The names of the slots left unbound (optional capabilities the library lacks).
template <class Api, class ForEach>
std::vector<std::string> unbound_symbols(Api api, ForEach for_each) {
  std::vector<std::string> out;
  for_each(api, [&](auto& slot, std::initializer_list<const char*>, bool) {
    if (!slot) out.emplace_back(slot.name);
  });
  return out;
}

}  // namespace gw
