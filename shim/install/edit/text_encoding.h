// Text encodings the installer meets in the files it reads: code points written as UTF-8 (TOML's
// \u escapes), and Windows PowerShell 5.1's UTF-16LE files (Out-File, Set-Content -Encoding
// Unicode) read as UTF-8.
#pragma once

#include <cstdint>
#include <string>

namespace dxshim::install {

void AppendUtf8(std::string& out, std::uint32_t code_point);

// `bytes` as UTF-8 text: UTF-16LE after its byte order mark (FF FE) converted, a UTF-8 byte order
// mark dropped, anything else as it is.
std::string TextOf(const std::string& bytes);

}  // namespace dxshim::install
