#include "badinput_cases.h"

#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "run_binary.h"

namespace gw::badinput {
namespace {

namespace fs = std::filesystem;

std::string read_repo_file(const std::string& rel) {
  std::ifstream in(std::string(GW_SOURCE_DIR) + "/" + rel, std::ios::binary);
  if (!in) throw std::runtime_error("missing repository file " + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

std::vector<BadFile> make_files(const fs::path& d) {
  std::vector<BadFile> f;
  auto add = [&](const std::string& name, const std::string& text) {
    write(d / name, text);
    f.push_back({name, (d / name).string()});
  };
  f.push_back({"missing", (d / "no-such-file").string()});
  fs::create_directory(d / "a_directory");
  f.push_back({"directory", (d / "a_directory").string()});
  add("empty", "");
  std::mt19937 rng(20261201);
  std::string random(1 << 20, '\0');
  for (char& c : random) c = static_cast<char>(rng() & 0xFF);
  add("random_1mb", random);
  const std::string xml = read_repo_file("fixtures/captures/017-rtx3080-vram-90pct-busy/input.xml");
  add("truncated_xml", xml.substr(0, xml.size() / 2));
  const std::string json = read_repo_file("scenarios/demo.json");
  add("truncated_json", json.substr(0, json.size() / 2));
  add("single_line_20mb", std::string(20u << 20, 'a'));
  std::string lines;
  lines.reserve(10'000'000);
  for (int i = 0; i < 5'000'000; ++i) lines += "x\n";
  add("five_million_lines", lines);
  // A kernel log whose process name is not UTF-8 and carries a terminal title escape.
  add("non_utf8",
      "[  812.231093] NVRM: Xid (PCI:0000:3b:00): 79, pid=4242, name=py\xff\xfe\xc3("
      "\x1b]0;owned\x07thon, GPU has fallen off the bus.\n");
  add("unreadable", "not for you\n");
  ::chmod((d / "unreadable").c_str(), 0);
  f.push_back({"dev_zero", "/dev/zero"});
  if (::mkfifo((d / "fifo").c_str(), 0600) != 0) throw std::runtime_error("mkfifo failed");
  f.push_back({"fifo_no_writer", (d / "fifo").string()});
  return f;
}

}  // namespace

const std::vector<std::string>& bad_file_names() {
  static const std::vector<std::string> names = {
      "missing",          "directory",          "empty",
      "random_1mb",       "truncated_xml",      "truncated_json",
      "single_line_20mb", "five_million_lines", "non_utf8",
      "unreadable",       "dev_zero",           "fifo_no_writer"};
  return names;
}

const fs::path& work_dir() {
  static const clitest::TempDir dir;  // removed at exit
  return dir.path();
}

const std::vector<BadFile>& bad_files() {
  static const std::vector<BadFile> files = make_files(work_dir());
  return files;
}

std::vector<std::string> unprivileged_prefix() {
  if (::geteuid() != 0) return {};
  return {"/usr/bin/setpriv", "--inh-caps=-all", "--bounding-set=-all", "--"};
}

}  // namespace gw::badinput
