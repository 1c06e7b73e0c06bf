// A whole file as a string ("" when it cannot be read): for comparing with goldens and logs.
#pragma once

#include <string>

namespace dxshim::test {

std::string ReadFile(const std::string& path);

}  // namespace dxshim::test
