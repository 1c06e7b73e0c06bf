// libFuzzer target: byte quantities by apimachinery's grammar (devices/byte_quantity.h), and the
// GPU memory amounts read with it (devices::ParseGpuMemory: dxshim.io/gpu-memory and serve's
// memory options). The input is the quantity's text. Properties:
// - never crashes, and no signed overflow (UBSan) however long the digits or the exponent;
// - ReadByteQuantity and ParseByteQuantity agree: an accepted text gives the same bytes, a refused
//   one throws std::invalid_argument naming the text; bytes are 0 unless accepted;
// - an amount ParseGpuMemory accepts is at least 1Mi (or zero only where zero is allowed), and its
//   refusals say what is wrong;
// - FormatBytes of the bytes reads back: exactly for a whole number of Ki, else to within the
//   tenth of a Mi it shows (below 2^64/10: see CheckFormat);
// - monotonic in the suffix: for a plain unsigned number, each suffix of a larger factor
//   (n < u < m < none < k < Ki < M < Mi < ... < E < Ei) never gives fewer bytes, and once one is
//   too large every larger one is; "e3" is exactly "k", "e6" exactly "M" (and so on), and a '+'
//   changes nothing.
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "devices/allocation/gpu_memory.h"
#include "devices/byte_quantity.h"

namespace {

using dxshim::devices::ByteQuantity;
using Problem = ByteQuantity::Problem;

bool Same(const ByteQuantity& a, const ByteQuantity& b) {
  return a.problem == b.problem && a.bytes == b.bytes;
}

void CheckAgreement(const std::string& text, const ByteQuantity& q) {
  if (q.problem != Problem::kNone && q.bytes != 0) std::abort();
  try {
    const auto bytes = dxshim::devices::ParseByteQuantity(text);
    if (q.problem != Problem::kNone || bytes != q.bytes) std::abort();
  } catch (const std::invalid_argument& e) {
    if (q.problem == Problem::kNone) std::abort();
    // what() is a C string: a text with a NUL shows up to it.
    const auto shown = "'" + text.substr(0, text.find('\0'));
    if (std::string_view(e.what()).find(shown) == std::string_view::npos) std::abort();
  }
}

void CheckGpuMemory(const std::string& text, const ByteQuantity& q) {
  using dxshim::devices::ZeroGpuMemory;
  for (const auto zero : {ZeroGpuMemory::kRefused, ZeroGpuMemory::kAllowed}) {
    try {
      const auto bytes = dxshim::devices::ParseGpuMemory(text, zero);
      if (q.problem != Problem::kNone || bytes != q.bytes) std::abort();
      if (bytes < (std::uint64_t{1} << 20) && !(bytes == 0 && zero == ZeroGpuMemory::kAllowed)) {
        std::abort();
      }
    } catch (const std::invalid_argument& e) {
      if (std::string_view(e.what()).empty()) std::abort();
    }
  }
}

void CheckFormat(std::uint64_t bytes) {
  const auto text = dxshim::devices::FormatBytes(bytes);
  if (text.ends_with("B")) return;  // below 1Mi and not a whole Ki: no unit a quantity has
  const auto back = dxshim::devices::ReadByteQuantity(text);
  if (back.problem != Problem::kNone) std::abort();
  if (bytes % 1024 == 0) {
    if (back.bytes != bytes) std::abort();
    return;
  }
  // "12.3Mi": the tenths of a Mi, rounded down, read back rounded up to whole bytes.
  constexpr std::uint64_t kTenth = (std::uint64_t{1} << 20) / 10 + 1;
  if (back.bytes > bytes || bytes - back.bytes > kTenth) std::abort();
}

// Suffixes by increasing factor, with the exponent each decimal one equals.
constexpr std::pair<const char*, const char*> kSuffixes[] = {
    {"n", "e-9"}, {"u", "e-6"},    {"m", "e-3"}, {"", "e0"},      {"k", "e3"},  {"Ki", nullptr},
    {"M", "e6"},  {"Mi", nullptr}, {"G", "e9"},  {"Gi", nullptr}, {"T", "e12"}, {"Ti", nullptr},
    {"P", "e15"}, {"Pi", nullptr}, {"E", "e18"}, {"Ei", nullptr},
};

void CheckMonotonic(std::string_view number) {
  ByteQuantity previous;
  bool first = true;
  for (const auto& [suffix, exponent] : kSuffixes) {
    const auto q = dxshim::devices::ReadByteQuantity(std::string(number) + suffix);
    if (q.problem != Problem::kNone && q.problem != Problem::kTooLarge) std::abort();
    if (exponent && !Same(q, dxshim::devices::ReadByteQuantity(std::string(number) + exponent))) {
      std::abort();
    }
    if (!Same(q, dxshim::devices::ReadByteQuantity("+" + std::string(number) + suffix))) {
      std::abort();
    }
    if (!first) {
      if (previous.problem == Problem::kTooLarge && q.problem != Problem::kTooLarge) std::abort();
      if (q.problem == Problem::kNone && q.bytes < previous.bytes) std::abort();
    }
    previous = q;
    first = false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto q = dxshim::devices::ReadByteQuantity(text);
  CheckAgreement(text, q);
  CheckGpuMemory(text, q);
  if (q.problem == Problem::kNone) CheckFormat(q.bytes);
  // A plain unsigned number: digits with at most one point, something to put suffixes after.
  if (q.problem == Problem::kNone && q.plain && !text.empty() && text[0] != '+' && text[0] != '-' &&
      size <= 64) {
    CheckMonotonic(text);
  }
  return 0;
}
