// The message an edit of shim/install/edit throws (EditError), for the text-layer tests.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "shim/install/edit/command_line.h"

namespace dxshim::install::test {

// What `f` threw as EditError, or "(no error)".
inline std::string ErrorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const EditError& error) {
    return error.what();
  }
  return "(no error)";
}

inline bool Has(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

}  // namespace dxshim::install::test
