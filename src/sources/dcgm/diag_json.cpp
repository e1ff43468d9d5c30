#include "sources/dcgm/diag_json.h"

#include <map>
#include <optional>
#include <string>

#include "sources/smi/text_util.h"

namespace gw::dcgm {
namespace {

// One open object or array: the key it stands under (array elements inherit their array's),
// its scalar members, and the warnings and info lines gathered for it.
struct Frame {
  std::string key;
  bool array = false;
  size_t line = 0;
  std::map<std::string, std::string> scalars;
  std::vector<std::string> warnings, info;
};

std::optional<DcgmKind> status_kind(std::string_view s) {
  const std::pair<std::string_view, DcgmKind> kWords[] = {{"pass", DcgmKind::kDiagPass},
                                                          {"fail", DcgmKind::kDiagFail},
                                                          {"warn", DcgmKind::kDiagWarn},
                                                          {"skip", DcgmKind::kDiagSkip},
                                                          {"not run", DcgmKind::kDiagSkip}};
  for (const auto& [w, k] : kWords)
    if (s.size() >= w.size() && text::iequals(s.substr(0, w.size()), w)) return k;
  return std::nullopt;
}

// "0", "3", "0,1,2,3" -> the ids.
std::vector<unsigned> ids_of(std::string_view s) {
  std::vector<unsigned> out;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] < '0' || s[i] > '9') {
      ++i;
      continue;
    }
    size_t used = 0;
    const uint64_t n = text::leading_digits(s.substr(i), used);
    if (n < 100000) out.push_back(static_cast<unsigned>(n));
    i += used;
  }
  return out;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : " | ") + s;
  return out;
}

class Scanner {
 public:
  Scanner(std::string_view text, std::string_view origin, size_t first_line,
          std::vector<DcgmResult>& out)
      : t_(text), origin_(origin), line_(first_line), out_(out) {}
  BlockInfo run();

 private:
  bool string_at(std::string& s);  // t_[i_] == '"'; false when the text ends inside it
  void scalar(std::string value);
  void open(bool array);
  void close();
  void result(const Frame& o);
  Frame* object_above(size_t depth);
  std::string where(size_t line) const { return std::string(origin_) + ":" + std::to_string(line); }

  std::string_view t_, origin_;
  size_t i_ = 0, line_;
  std::vector<DcgmResult>& out_;
  std::vector<Frame> stack_;
  std::string key_;
  bool titled_ = false;  // "DCGM GPU Diagnostic" / "DCGM Diagnostic" / "test_categories" seen
  size_t results_ = 0, first_result_line_ = 0;
  bool bad_ = false;
};

bool Scanner::string_at(std::string& s) {
  s.clear();
  for (++i_; i_ < t_.size(); ++i_) {
    const char c = t_[i_];
    if (c == '"') {
      ++i_;
      return true;
    }
    if (c == '\n') return false;  // DCGM escapes its newlines: a raw one is a cut string
    if (c != '\\' || i_ + 1 >= t_.size()) {
      s += c;
      continue;
    }
    const char e = t_[++i_];
    s += e == 't' ? '\t' : e == 'n' ? ' ' : e;
  }
  return false;
}

Frame* Scanner::object_above(size_t depth) {
  for (size_t d = depth; d-- > 0;)
    if (!stack_[d].array) return &stack_[d];
  return nullptr;
}

void Scanner::scalar(std::string value) {
  if (stack_.empty()) return;
  Frame& f = stack_.back();
  if (f.array) {  // "warnings": ["..."], "info": ["..."]
    Frame* o = object_above(stack_.size() - 1);
    if (o && (f.key == "warnings" || f.key == "errors")) o->warnings.push_back(std::move(value));
    if (o && f.key == "info") o->info.push_back(std::move(value));
    if (o && (f.key == "gpu_ids" || f.key == "entity_ids")) {  // "gpu_ids": [0, 1]
      std::string& ids = o->scalars[f.key];
      ids += (ids.empty() ? "" : ",") + value;
    }
    return;
  }
  if (key_.empty()) return;  // a value without a key: an edited paste ({"..."})
  if (key_ == "warnings" || key_ == "warning" || key_ == "error")
    f.warnings.push_back(value);  // one warning as a plain string member
  if (key_ == "info") f.info.push_back(value);
  f.scalars[key_] = std::move(value);
  key_.clear();
}

void Scanner::open(bool array) {
  Frame f;
  f.key = !stack_.empty() && stack_.back().array ? stack_.back().key : key_;
  // DCGM's own keys: without one, a "name" / "status" pair is some other tool's JSON.
  if (f.key == "DCGM GPU Diagnostic" || f.key == "DCGM Diagnostic" || f.key == "test_categories")
    titled_ = true;
  f.array = array;
  f.line = line_;
  key_.clear();
  stack_.push_back(std::move(f));
}

void Scanner::close() {
  Frame f = std::move(stack_.back());
  stack_.pop_back();
  key_.clear();
  if (f.array) return;
  Frame* above = object_above(stack_.size());
  if (f.key == "warnings" && above) {  // {"warning": "...", "error_id": 29, ...}
    for (auto& w : f.warnings) above->warnings.push_back(std::move(w));
    return;
  }
  if (f.key == "test_summary" || !f.scalars.count("status")) return;
  result(f);
}

void Scanner::result(const Frame& o) {
  const auto kind = status_kind(o.scalars.at("status"));
  const auto group = o.scalars.find("entity_group");
  if (!kind || (group != o.scalars.end() && group->second != "GPU")) return;
  std::string name, category;
  for (size_t d = stack_.size(); d-- > 0;) {
    const auto& s = stack_[d].scalars;
    if (name.empty() && s.count("name")) name = s.at("name");
    if (category.empty() && s.count("category")) category = s.at("category");
  }
  if (name.empty()) return;  // a status outside any test (a summary of the run)
  if (results_++ == 0) first_result_line_ = o.line;
  if (*kind == DcgmKind::kDiagPass) return;
  bad_ = bad_ || *kind == DcgmKind::kDiagFail || *kind == DcgmKind::kDiagWarn;
  std::vector<unsigned> gpus;
  for (const char* k : {"gpu_id", "gpu_ids", "entity_id"})
    if (const auto it = o.scalars.find(k); it != o.scalars.end() && gpus.empty())
      gpus = ids_of(it->second);
  auto push = [&](std::optional<unsigned> gpu) {
    DcgmResult r;
    r.kind = *kind;
    r.gpu = gpu;
    r.part = "dcgmi diag";
    r.test = category.empty() || category == name ? name : category + " / " + name;
    r.text = joined(o.warnings.empty() ? o.info : o.warnings);
    r.origin = where(o.line);
    out_.push_back(std::move(r));
  };
  if (gpus.empty()) push(std::nullopt);
  for (unsigned g : gpus) push(g);
}

BlockInfo Scanner::run() {
  std::string s;
  while (i_ < t_.size()) {
    const char c = t_[i_];
    if (c == '\n') {
      ++line_;
      ++i_;
    } else if (c == '"') {
      if (!string_at(s)) break;
      size_t j = i_;
      while (j < t_.size() && (t_[j] == ' ' || t_[j] == '\t' || t_[j] == '\r')) ++j;
      if (j < t_.size() && t_[j] == ':') {
        key_ = s;
        i_ = j + 1;
      } else {
        scalar(s);
      }
    } else if (c == '{' || c == '[') {
      open(c == '[');
      ++i_;
    } else if (c == '}' || c == ']') {
      if (stack_.empty()) break;  // the JSON text ended
      close();
      ++i_;
      if (stack_.empty()) break;
    } else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
      const size_t b = i_;
      while (i_ < t_.size() &&
             std::string_view(",}] \t\r\n").find(t_[i_]) == std::string_view::npos)
        ++i_;
      scalar(std::string(t_.substr(b, i_ - b)));
    } else {
      ++i_;
    }
  }
  BlockInfo info;
  info.recognised = titled_;
  if (info.recognised && !stack_.empty()) info.cut = "dcgmi diag JSON cut before its end";
  if (titled_ && results_ > 0 && !bad_) {
    DcgmResult pass;
    pass.kind = DcgmKind::kDiagPass;
    pass.part = "dcgmi diag";
    pass.text = "no test failed or warned in the results shown";
    pass.origin = where(first_result_line_);
    out_.push_back(std::move(pass));
  }
  return info;
}

}  // namespace

BlockInfo read_diag_json(std::string_view block, std::string_view origin, size_t first_line,
                         std::vector<DcgmResult>& out) {
  std::vector<DcgmResult> found;
  BlockInfo info = Scanner(block, origin, first_line, found).run();
  if (info.recognised) out.insert(out.end(), found.begin(), found.end());
  return info;
}

bool json_like(std::string_view t) {
  if (t.empty()) return false;
  const char c = t.front();
  return c == '{' || c == '}' || c == '[' || c == ']' || c == '"' || c == '-' ||
         (c >= '0' && c <= '9') || text::starts_with(t, "true") || text::starts_with(t, "false") ||
         text::starts_with(t, "null");
}

}  // namespace gw::dcgm
