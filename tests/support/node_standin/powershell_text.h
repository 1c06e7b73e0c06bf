// The text of files as Windows PowerShell 5.1 reads and writes it: byte order marks, its
// encodings, lines (portable).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dxshim::test::node_standin::powershell {

// File BYTES as UTF-8 text: a UTF-8, UTF-16LE or UTF-16BE byte order mark decides (and is
// dropped); without one the bytes are taken as they are (PowerShell 5.1 would read them in the
// ANSI code page: the same for ASCII).
std::string DecodeText(const std::string& bytes);

// TEXT (UTF-8) in the encoding a -Encoding value names (Unicode, BigEndianUnicode, UTF8, ASCII,
// Default, OEM, String; case-insensitive), with its byte order mark when BOM. Nothing for an
// encoding this stand-in does not write.
std::optional<std::string> EncodeText(const std::string& text, const std::string& encoding,
                                      bool bom);

// The lines of TEXT as StreamReader.ReadLine gives them (\r\n, \n or \r end a line; a last
// line end gives no empty line).
std::vector<std::string> SplitLines(const std::string& text);

}  // namespace dxshim::test::node_standin::powershell
