// Prometheus' text exposition format (version 0.0.4, what an exporter sends a client that asks for
// no other), read one sample line at a time: what doctor needs of another program's /metrics.
// Lenient: a line that is not a sample (a comment, a blank, a malformed one) is skipped, never an
// error, since one odd series must not hide the ones asked for.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace dxshim::doctor {

struct ExpositionSample {
  std::string name;
  std::map<std::string, std::string> labels;  // values unescaped (\\, \" and \n)
  std::string value;                          // as written: "1", "0.25", "NaN", "+Inf"
};

// `line` (without its line end; a trailing '\r' is ignored) as
// `name{label="value",...} value [timestamp]`; also the quoted forms of names that are not
// identifiers (`{"name.x",label="v"} 1`). nullopt for a comment, a blank line or anything else.
std::optional<ExpositionSample> ParseExpositionLine(std::string_view line);

}  // namespace dxshim::doctor
