#include "slurm/scontrol.h"

#include <cctype>
#include <filesystem>
#include <sstream>
#include <vector>

#include "slurm/run_program.h"

namespace gw::slurm {
namespace {

std::string trim(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const size_t e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

// "gpuwarden: GPU 0 ... [root@2026-12-01T08:24:53]" -> without the bracket Slurm appends.
std::string strip_stamp(std::string r) {
  const size_t open = r.rfind(" [");
  if (open != std::string::npos && r.back() == ']' && r.find('@', open) != std::string::npos)
    r.erase(open);
  return r;
}

// The one-line form puts more Key=Value fields after Reason; a field key is a capitalised
// word directly followed by '=' after a space.
size_t next_field(std::string_view s, size_t from) {
  for (size_t i = from; i + 1 < s.size(); ++i) {
    if (s[i] != ' ' || !std::isupper(static_cast<unsigned char>(s[i + 1]))) continue;
    size_t j = i + 1;
    while (j < s.size() && std::isalnum(static_cast<unsigned char>(s[j]))) ++j;
    if (j < s.size() && s[j] == '=') return i;
  }
  return std::string_view::npos;
}

}  // namespace

bool NodeStatus::drained() const {
  return state.find("DRAIN") != std::string::npos;
}

Result<NodeStatus> parse_show_node(std::string_view text) {
  NodeStatus st;
  bool have_state = false;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    for (std::string w; words >> w;)
      if (w.rfind("State=", 0) == 0) {
        st.state = w.substr(6);
        have_state = true;
      }
    const size_t r = line.find("Reason=");
    if (r == std::string::npos || (r > 0 && line[r - 1] != ' ')) continue;
    const std::string_view rest = std::string_view(line).substr(r + 7);
    // A stamp "[user@time]" ends the reason; otherwise the next field or the line does.
    const size_t stamp = rest.find("] ");
    const size_t end = stamp != std::string_view::npos ? stamp + 1 : next_field(rest, 0);
    st.reason = strip_stamp(trim(rest.substr(0, end)));
  }
  if (!have_state)
    return make_error("slurm.bad_reply",
                      "no State= in scontrol's answer: " +
                          trim(text.substr(0, std::min<size_t>(text.size(), 200))));
  if (st.reason == "(null)" || st.reason == "none") st.reason.clear();
  return st;
}

Result<NodeStatus> Scontrol::show_node(const std::string& node) const {
  auto r = run_program({path_, "show", "node", node}, timeout_);
  if (!r) return make_error("slurm.unavailable", r.error().message);
  if (r->exit_code != 0)
    return make_error("slurm.failed", "scontrol show node " + node + " failed: " + trim(r->err));
  return parse_show_node(r->out);
}

Status Scontrol::update(const std::vector<std::string>& args, const std::string& what) const {
  std::vector<std::string> argv = {path_, "update"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = run_program(argv, timeout_);
  if (!r) return make_error("slurm.unavailable", r.error().message);
  if (r->exit_code != 0)
    return make_error("slurm.failed", what + " failed: " + trim(r->err + r->out));
  return {};
}

Status Scontrol::drain(const std::string& node, const std::string& reason) const {
  return update({"NodeName=" + node, "State=DRAIN", "Reason=" + reason}, "draining " + node);
}

Status Scontrol::resume(const std::string& node) const {
  return update({"NodeName=" + node, "State=RESUME"}, "resuming " + node);
}

Status Scontrol::set_admin_comment(const std::string& job_id, const std::string& comment) const {
  Status live =
      update({"JobId=" + job_id, "AdminComment=" + comment}, "AdminComment of job " + job_id);
  if (live || live.error().message.find("already finished") == std::string::npos) return live;
  // sacctmgr sits beside scontrol (both in slurm-client).
  const std::string sacctmgr = (std::filesystem::path(path_).parent_path() / "sacctmgr").string();
  auto r = run_program({sacctmgr, "-i", "modify", "job", "where", "jobid=" + job_id, "set",
                        "AdminComment=" + comment},
                       timeout_);
  if (!r) return make_error("slurm.unavailable", r.error().message);
  if (r->exit_code != 0)
    return make_error("slurm.failed", live.error().message +
                                          "; sacctmgr (needs slurmdbd): " + trim(r->err + r->out));
  return {};
}

}  // namespace gw::slurm
