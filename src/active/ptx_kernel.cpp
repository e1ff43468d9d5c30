#include "active/ptx_kernel.h"

#include <fmt/format.h>

#include <cctype>

namespace gw::active {
namespace {

// gw_load(buf, n, iters): every thread walks the buffer with a grid stride; per element it
// loads a float, runs `iters` dependent FMAs on it and stores it back. Memory traffic and
// arithmetic both scale with the launch, and the stores keep the JIT from dropping the work.
constexpr const char kPtx[] = R"PTX(//
// gpuwarden load kernel (hand-written PTX, JIT-compiled by the driver)
//
.version 6.0
.target sm_50
.address_size 64

.visible .entry gw_load(
    .param .u64 gw_load_buf,
    .param .u32 gw_load_n,
    .param .u32 gw_load_iters
)
{
    .reg .pred  %p<3>;
    .reg .b32   %r<12>;
    .reg .f32   %f<4>;
    .reg .b64   %rd<6>;

    ld.param.u64        %rd1, [gw_load_buf];
    ld.param.u32        %r1, [gw_load_n];
    ld.param.u32        %r2, [gw_load_iters];
    cvta.to.global.u64  %rd2, %rd1;
    mov.u32             %r3, %ctaid.x;
    mov.u32             %r4, %ntid.x;
    mov.u32             %r5, %tid.x;
    mad.lo.s32          %r6, %r3, %r4, %r5;
    mov.u32             %r7, %nctaid.x;
    mul.lo.s32          %r8, %r7, %r4;
    setp.ge.u32         %p1, %r6, %r1;
    @%p1 bra            DONE;
ELEMENT:
    mul.wide.u32        %rd3, %r6, 4;
    add.s64             %rd4, %rd2, %rd3;
    ld.global.f32       %f1, [%rd4];
    mov.f32             %f2, 0f3F800000;
    mov.u32             %r9, 0;
FMA:
    fma.rn.f32          %f1, %f1, 0f3F7FFFEF, %f2;
    add.u32             %r9, %r9, 1;
    setp.lt.u32         %p2, %r9, %r2;
    @%p2 bra            FMA;
    st.global.f32       [%rd4], %f1;
    add.u32             %r6, %r6, %r8;
    setp.lt.u32         %p1, %r6, %r1;
    @%p1 bra            ELEMENT;
DONE:
    ret;
}
)PTX";

Error malformed(size_t line, const std::string& what) {
  return make_error("ptx.malformed", fmt::format("line {}: {}", line, what));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// The word after a directive: ".target sm_50" -> "sm_50".
std::string_view argument(std::string_view line, std::string_view directive) {
  std::string_view rest = trim(line.substr(directive.size()));
  const size_t end = rest.find_first_of(" \t,(;");
  return rest.substr(0, end);
}

// One line of the module: updates the header, returns an error for a misplaced directive.
Status read_line(std::string_view line, size_t no, PtxHeader& h) {
  if (const size_t c = line.find("//"); c != std::string_view::npos) line = line.substr(0, c);
  line = trim(line);
  if (line.empty() || line.front() != '.') return {};
  const bool first = h.version.empty();
  if (line.starts_with(".version")) {
    if (!first) return malformed(no, "a second .version directive");
    h.version = std::string(argument(line, ".version"));
    if (h.version.empty()) return malformed(no, ".version without a number");
  } else if (first) {
    return malformed(no, "a directive before .version (it must come first)");
  } else if (line.starts_with(".target")) {
    if (!h.target.empty()) return malformed(no, "a second .target directive");
    h.target = std::string(argument(line, ".target"));
  } else if (line.starts_with(".address_size")) {
    h.address_size = std::atoi(std::string(argument(line, ".address_size")).c_str());
  } else if (line.find(".entry") != std::string_view::npos) {
    const std::string_view name = argument(line.substr(line.find(".entry")), ".entry");
    if (name.empty()) return malformed(no, ".entry without a name");
    h.entries.emplace_back(name);
  }
  return {};
}

}  // namespace

const char* load_kernel_ptx() {
  return kPtx;
}

Result<PtxHeader> parse_ptx_header(std::string_view text) {
  PtxHeader h;
  int depth = 0;
  size_t no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    ++no;
    if (Status st = read_line(line, no, h); !st) return st.error();
    for (char ch : line.substr(0, line.find("//"))) {
      depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
      if (depth < 0) return malformed(no, "a '}' without its '{'");
    }
  }
  if (h.version.empty()) return malformed(no, "no .version directive");
  if (h.target.empty()) return malformed(no, "no .target directive");
  if (depth != 0) return malformed(no, "a '{' is never closed");
  if (h.entries.empty()) return malformed(no, "no .entry (nothing to launch)");
  return h;
}

}  // namespace gw::active
