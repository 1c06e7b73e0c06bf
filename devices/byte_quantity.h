// Byte quantities as Kubernetes writes resource quantities ("16Gi", "1.5Gi", "8G", "6e9"), for
// GPU memory in inventory files, dxshim.io/ annotations and serve's options; a unit of its own,
// as containerd's resourcequantity is.
//
// The grammar is Kubernetes' (k8s.io/apimachinery, pkg/api/resource/quantity.go: the <quantity>
// grammar in the comment on type Quantity, parseQuantityString and ParseQuantity; suffix.go:
// newSuffixer and suffixHandler.interpret):
//   - an optional sign, '+' or '-';
//   - a decimal number: digits, digits with a fraction, digits and a point ("1."), or a fraction
//     alone (".5"), with any number of digits;
//   - then one suffix or none: binary Ki Mi Gi Ti Pi Ei (2^10 .. 2^60), decimal n u m k M G T P E
//     (10^-9 .. 10^18), or an exponent: 'e' or 'E' and a signed base-10 integer ("6e9", "6E+9",
//     "5e-1"). An exponent takes no other suffix ("1e3Mi" is not a quantity), and nothing else may
//     follow, not even blanks.
// Kubernetes' ParseQuantity rounds a non-zero value finer than 1n up to 1n, and Quantity.Value()
// rounds up to the nearest integer away from zero; so a quantity that is not a whole number of
// bytes ("0.1", "1m", "1.0000001Mi") is rounded UP to the next whole byte here.
//
// Where dxshim differs, it refuses rather than guesses:
//   - a number needs at least one digit: Kubernetes' scanner reads "Gi", "." or "+" as zero,
//     although its own grammar asks for digits;
//   - the range is that of 64 bits unsigned: Kubernetes caps a binary-suffixed value silently at
//     2^63-1 and Value() overflows past it, where a larger value is refused here as too large;
//   - an exponent is used at its value: Kubernetes truncates it to 32 bits ("1e4294967296" is 1
//     there), here it is too large; one that does not fit 64 bits is not a quantity, as there.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace dxshim::devices {

// What ReadByteQuantity found in a text.
struct ByteQuantity {
  enum class Problem {
    kNone,
    kNotAQuantity,  // not Kubernetes' grammar
    kNegative,      // a '-' and a value other than zero ("-0Gi" is zero)
    kTooLarge,      // more than 2^64-1 bytes
  };
  Problem problem = Problem::kNone;
  std::uint64_t bytes = 0;  // rounded up to whole bytes; 0 unless problem is kNone
  bool plain = false;       // a number without suffix or exponent ("6", "1.5"): bytes
};

// Reads `text` by Kubernetes' grammar (above); never throws.
ByteQuantity ReadByteQuantity(std::string_view text);

// "16Gi", "512Mi", "1.5Gi", "8G", "6e9", "1073741824": bytes, a fraction rounded up to whole bytes.
// Throws std::invalid_argument naming the text and what is wrong with it: not a quantity,
// negative or too large.
std::uint64_t ParseByteQuantity(const std::string& text);

}  // namespace dxshim::devices
