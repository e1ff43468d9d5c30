#include "sources/app/cuda_errors.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "sources/smi/text_util.h"

namespace gw {
namespace {

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// The identifier starting at `p` ("cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE").
std::string_view word_at(std::string_view s, size_t p) {
  size_t e = p;
  while (e < s.size() && is_word_char(s[e])) ++e;
  return s.substr(p, e - p);
}

const CudaErrorInfo* name_in(std::string_view s) {
  for (std::string_view tag : {"cudaError", "CUDA_ERROR_"}) {
    for (size_t p = s.find(tag); p != std::string_view::npos; p = s.find(tag, p + 1)) {
      if (p > 0 && is_word_char(s[p - 1])) continue;
      if (const CudaErrorInfo* e = cuda_error_by_name(word_at(s, p))) return e;
    }
  }
  return nullptr;
}

// The number right after `key`, followed by `tail` when one is given: "Error 802:" is a CUDA
// error, "Init:Error   3 (39s ago)" in a pod listing is not.
std::optional<int> number_after(std::string_view s, std::string_view key, std::string_view tail) {
  for (size_t p = s.find(key); p != std::string_view::npos; p = s.find(key, p + 1)) {
    const std::string_view rest = s.substr(p + key.size());
    size_t used = 0;
    const uint64_t n = text::leading_digits(rest, used);
    if (used == 0 || used > 3) continue;
    if (!tail.empty() && rest.substr(used, tail.size()) != tail) continue;
    return static_cast<int>(n);
  }
  return std::nullopt;
}

struct CodeShape {
  std::string_view key, tail;
};

// Shapes where the number is the CUDA error: helper_cuda's "code=802(cudaError...)", PyTorch's
// "Error 802: ...", THC's "cuda runtime error (802)", deviceQuery's "returned 802", "CUDA error
// 802", "CUresult 802".
constexpr std::array<CodeShape, 6> kCodeShapes = {CodeShape{"code=", "("},
                                                  CodeShape{"Error ", ":"},
                                                  CodeShape{"cuda runtime error (", ")"},
                                                  CodeShape{"returned ", ""},
                                                  CodeShape{"CUDA error ", ""},
                                                  CodeShape{"CUresult ", ""}};

const CudaErrorInfo* code_in(std::string_view s) {
  for (const CodeShape& shape : kCodeShapes)
    if (const auto n = number_after(s, shape.key, shape.tail))
      if (const CudaErrorInfo* e = cuda_error_by_code(*n)) return e;
  return nullptr;
}

// "CUDA error: system not yet initialized" / "CUDA driver error: unknown error", and THC's
// "cuda runtime error (30) : unknown error" (CUDA before 10.1 numbered the runtime's errors
// apart, so its text, not its number, names the error).
const CudaErrorInfo* text_in(std::string_view s) {
  // PyTorch's own wording of 999 ("CUDA unknown error - this may be due to ...").
  if (s.find("CUDA unknown error") != std::string_view::npos) return cuda_error_by_code(999);
  for (std::string_view key : {"CUDA error: ", "CUDA driver error: ", "cuda error: ", ") : "}) {
    const size_t p = s.find(key);
    if (p == std::string_view::npos) continue;
    if (key == ") : " && s.find("runtime error (") == std::string_view::npos) continue;
    std::string_view rest = text::trim(s.substr(p + key.size()));
    if (const CudaErrorInfo* e = cuda_error_text_at(rest)) return e;
  }
  // A tool's own check on a driver call: gpu_burn's "Error (gpu_burn-drv.cpp:298): system not
  // yet initialized" (the driver's text after the source location).
  if (const size_t p = s.find("Error ("); p != std::string_view::npos) {
    const size_t close = s.find("): ", p);
    const std::string_view where =
        s.substr(p + 7, close == std::string_view::npos ? 0 : close - p - 7);
    if ((where.find(".cpp:") != std::string_view::npos ||
         where.find(".cu:") != std::string_view::npos) &&
        where.find(' ') == std::string_view::npos)
      return cuda_error_text_at(text::trim(s.substr(close + 3)));
  }
  return nullptr;
}

// `t` in `s` as whole words (no letter or digit glued to either end); both in lower case.
bool has_words(std::string_view s, std::string_view t) {
  for (size_t b = text::find(s, t); b != std::string_view::npos; b = text::find(s, t, b + 1)) {
    const size_t e = b + t.size();
    if ((b == 0 || !is_word_char(s[b - 1])) && (e >= s.size() || !is_word_char(s[e]))) return true;
  }
  return false;
}

// Older wordings of cudaGetErrorString for the same errors (CUDA 9/10 runtimes).
struct OlderText {
  std::string_view text;
  int code;
};
constexpr std::array kOlderTexts = {
    OlderText{"all CUDA-capable devices are busy or unavailable", 46},
};

// Texts this long are CUDA's own wording wherever they stand in a line naming CUDA; shorter
// ones ("initialization error", "out of memory") only where the line says a call failed.
constexpr size_t kDistinctiveText = 24;

bool says_failed(std::string_view s) {
  for (std::string_view m : {"fail", "FAIL", "Fail", " returned ", "cudaError", "CUresult"})
    if (s.find(m) != std::string_view::npos) return true;
  return false;
}

struct LowerText {
  std::string text;  // the catalog's text in lower case
  const CudaErrorInfo* error;
};

// The catalog's texts, then the older wordings, in lower case: made once, read-only after.
const std::vector<LowerText>& lower_texts() {
  static const std::vector<LowerText> texts = [] {
    std::vector<LowerText> v;
    const CudaErrorTable table = cuda_error_table();
    for (const CudaErrorInfo* e = table.begin; e != table.end; ++e)
      if (!e->text.empty()) v.push_back({text::ascii_lower(e->text), e});
    for (const OlderText& o : kOlderTexts)
      v.push_back({text::ascii_lower(o.text), cuda_error_by_code(o.code)});
    return v;
  }();
  return texts;
}

// A catalog text anywhere in the line, the longest that fits, case aside: glog's "Check
// failed: error == cudaSuccess (46 vs. 0)  all CUDA-capable devices are busy or unavailable",
// AutoDock's "cudaGetDeviceCount failed initialization error". The line is lowered once; each
// text was a case-blind search calling tolower per byte pair (~50,000 instructions a line).
const CudaErrorInfo* text_anywhere(std::string_view s) {
  const bool failed = says_failed(s);
  const std::string lower = text::ascii_lower(s);
  const CudaErrorInfo* best = nullptr;
  size_t best_len = 0;
  for (const LowerText& t : lower_texts()) {
    if (t.text.size() <= best_len || (!failed && t.text.size() < kDistinctiveText)) continue;
    if (has_words(lower, t.text)) {
      best = t.error;
      best_len = t.text.size();
    }
  }
  return best;
}

bool names_cuda(std::string_view s) {
  for (size_t i = 0; i + 4 <= s.size(); ++i)
    if ((s[i] == 'c' || s[i] == 'C') && (s[i + 1] == 'u' || s[i + 1] == 'U') &&
        (s[i + 2] == 'd' || s[i + 2] == 'D') && (s[i + 3] == 'a' || s[i + 3] == 'A'))
      return true;
  return false;
}

}  // namespace

const CudaErrorInfo* cuda_error_in_line(std::string_view line) {
  if (line.size() < 8) return nullptr;
  // Every shape says "cuda" but gpu_burn's own check, which names its driver source file.
  if (!names_cuda(line) && line.find("gpu_burn-drv.cpp:") == std::string_view::npos) return nullptr;
  if (const CudaErrorInfo* e = name_in(line)) return e;
  if (const CudaErrorInfo* e = text_in(line)) return e;
  if (const CudaErrorInfo* e = code_in(line)) return e;
  return text_anywhere(line);
}

}  // namespace gw
