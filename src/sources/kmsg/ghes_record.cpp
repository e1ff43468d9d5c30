#include "sources/kmsg/ghes_record.h"

#include <array>
#include <utility>

#include "sources/smi/text_util.h"

namespace gw::kmsg {
namespace {

constexpr std::string_view kTag = "[Hardware Error]:";

// The PCIe AER status bits by the names the kernel's native AER report prints for them, so
// that a firmware-first record and a native report name an error the same way.
constexpr std::array<std::pair<unsigned, std::string_view>, 8> kCorrectable = {{
    {0, "RxErr"},
    {6, "BadTLP"},
    {7, "BadDLLP"},
    {8, "Rollover"},
    {12, "Timeout"},
    {13, "NonFatalErr"},
    {14, "CorrIntErr"},
    {15, "HeaderOF"},
}};
constexpr std::array<std::pair<unsigned, std::string_view>, 18> kUncorrectable = {{
    {0, "Undefined"},
    {4, "DLP"},
    {5, "SDES"},
    {12, "TLP"},
    {13, "FCP"},
    {14, "CmpltTO"},
    {15, "CmpltAbrt"},
    {16, "UnxCmplt"},
    {17, "RxOF"},
    {18, "MalfTLP"},
    {19, "ECRC"},
    {20, "UnsupReq"},
    {21, "ACSViol"},
    {22, "UncorrIntErr"},
    {23, "BlockedTLP"},
    {24, "AtomicOpBlocked"},
    {25, "TLPBlockedErr"},
    {26, "PoisonTLPBlocked"},
}};

template <size_t N>
void name_bits(uint32_t status, const std::array<std::pair<unsigned, std::string_view>, N>& names,
               std::string& out) {
  for (const auto& [bit, name] : names) {
    if ((status & (uint32_t{1} << bit)) == 0) continue;
    out += bit < 10 ? "  [ " : "  [";
    out += std::to_string(bit);
    out += "] ";
    out += name;
  }
}

// "0x00004000, aer_uncor_mask: 0x00000000" -> 0x4000.
std::optional<uint32_t> hex_word(std::string_view v) {
  if (!text::starts_with(v, "0x")) return std::nullopt;
  v = v.substr(
      2, v.find_first_of(", ") == std::string_view::npos ? v.npos : v.find_first_of(", ") - 2);
  if (v.empty() || v.size() > 8) return std::nullopt;
  uint32_t x = 0;
  for (char c : v) {
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                         : -1;
    if (d < 0) return std::nullopt;
    x = x << 4 | static_cast<uint32_t>(d);
  }
  return x;
}

// GHES severities in the words of a native AER report ("recoverable": the platform contained
// an uncorrected error; the rules count it as a native non-fatal one).
std::string_view aer_words(std::string_view severity) {
  if (severity == "fatal") return "Uncorrected (Fatal)";
  if (severity == "recoverable") return "Uncorrected (Non-Fatal)";
  if (severity == "corrected" || severity == "info") return "Corrected";
  return "unknown (not in the lines shown)";
}

}  // namespace

std::optional<GhesLine> parse_ghes_line(std::string_view body) {
  body = text::trim(body);
  GhesLine l;
  if (!body.empty() && body.front() == '{') {
    const size_t close = body.find('}');
    if (close == std::string_view::npos || close < 2 || close > 11) return std::nullopt;
    const auto n = text::parse_u64(body.substr(1, close - 1));
    if (!n || *n > 0xffffffffULL) return std::nullopt;
    l.record = static_cast<unsigned>(*n);
    body = body.substr(close + 1);
  }
  if (!text::starts_with(body, kTag)) return std::nullopt;
  const std::string_view rest = text::trim(body.substr(kTag.size()));
  const size_t colon = rest.find(": ");
  if (colon == std::string_view::npos) {  // "It has been corrected by h/w and ..."
    l.value = rest;
    return l;
  }
  l.key = rest.substr(0, colon);
  l.value = text::trim(rest.substr(colon + 2));
  return l;
}

GhesRecord::Section& GhesRecord::current() {
  if (sections_.empty()) sections_.emplace_back();
  return sections_.back();
}

void GhesRecord::add(const GhesLine& l) {
  const std::string_view k = l.key, v = l.value;
  if (k == "event severity") {
    severity_ = std::string(v);
  } else if (text::starts_with(k, "Error ") && text::ends_with(k, ", type")) {
    sections_.emplace_back().type = std::string(v);  // "Error 0, type: recoverable"
  } else if (k == "section_type") {
    if (!current().section_type.empty()) sections_.emplace_back();
    current().section_type = std::string(v);
  } else if (k == "port_type") {
    current().port_type = std::string(v);
  } else if (k == "device_id" && current().address.empty()) {
    current().address = std::string(v);  // "0000:01:00.0" (the ids line is "vendor_id: ...")
  } else if (k == "vendor_id") {
    current().ids = "vendor_id: " + std::string(v);
  } else if (k == "aer_uncor_status") {
    current().uncor_status = hex_word(v);
  } else if (k == "aer_cor_status") {
    current().cor_status = hex_word(v);
  } else if (k == "aer_status") {  // older kernels: one status, its kind by the severity
    (current().type == "corrected" || severity_ == "corrected" ? current().cor_status
                                                               : current().uncor_status) =
        hex_word(v);
  }
}

bool GhesRecord::starts_another(const GhesLine& l) const {
  if (l.key == "event severity") return !severity_.empty();
  if (sections_.empty()) return false;
  const Section& s = sections_.back();
  return (l.key == "device_id" && !s.address.empty()) || (l.key == "vendor_id" && !s.ids.empty()) ||
         (l.key == "port_type" && !s.port_type.empty());
}

std::vector<Event> GhesRecord::events() const {
  std::vector<Event> out;
  for (const Section& s : sections_) {
    const auto address = normalize_pci_bus_id(s.address);
    const bool pcie = s.section_type.empty() || s.section_type.find("PCIe") != std::string::npos;
    if (!address || !pcie) continue;
    const std::string severity = s.type.empty() ? severity_ : s.type;
    Event ev;
    ev.kind = EventKind::kDriverMessage;
    ev.driver_kind = DriverMessageKind::kPcieAer;
    ev.code = static_cast<unsigned>(DriverMessageKind::kPcieAer);
    ev.pci_bus_id = address;
    std::string m = "GHES " + s.address + ": firmware-first PCIe error";
    if (record_) m += " (record {" + std::to_string(*record_) + "})";
    m += ", severity: " + std::string(aer_words(severity));
    if (!severity.empty()) m += " ('" + severity + "')";
    if (!s.port_type.empty()) m += ", port_type: " + s.port_type;
    if (!s.ids.empty()) m += ", " + s.ids;
    std::string bits;
    if (severity != "corrected" && s.uncor_status) name_bits(*s.uncor_status, kUncorrectable, bits);
    if (severity != "recoverable" && severity != "fatal" && s.cor_status)
      name_bits(*s.cor_status, kCorrectable, bits);
    if (!bits.empty()) m += ", errors:" + bits;
    ev.message = std::move(m);
    out.push_back(std::move(ev));
  }
  return out;
}

}  // namespace gw::kmsg
