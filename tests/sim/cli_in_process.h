// Runs `gpuwarden simulate ARGS` in this process through the CLI table (no child process), with
// stdout and stderr captured: the simulate CLI tests share it.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"

namespace gw::cli {

struct CliRun {
  int code = 0;
  std::string out, err;
};

inline CliRun simulate(std::vector<std::string> args) {
  args.insert(args.begin(), {"gpuwarden", "simulate"});
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  Io io{out, err, false};
  CliRun r;
  r.code = run(static_cast<int>(argv.size()), argv.data(), io);
  r.out = out.str();
  r.err = err.str();
  return r;
}

}  // namespace gw::cli
