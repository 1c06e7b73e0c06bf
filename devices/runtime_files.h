// Driver runtime file lists: parsing the registry's CopyToVm* values and keeping what is unsafe
// out. Registry data and inventory files are untrusted input.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "devices/device.h"

namespace dxshim::devices {

// Why `source` may not be used as a path relative to a DriverStore folder, or nullopt if it may:
// it must be non-empty, relative (no root, no drive letter, no UNC or device prefix), free of
// ".." components, NUL and other control characters.
std::optional<std::string> UnsafeSourceReason(std::string_view source);

// Why `name` may not be a destination file name in System32/SysWOW64, or nullopt if it may: a
// plain file name (no separators, not "." or "..", no characters Windows forbids).
std::optional<std::string> UnsafeDestinationReason(std::string_view name);

// Splits REG_MULTI_SZ data (UTF-8 here, strings separated by NUL, ending in an empty string)
// into its strings.
std::vector<std::string> SplitMultiSz(std::string_view data);

// One CopyToVm* value: [source] or [source, destination]; with one string the destination is
// the source's file name. Throws std::invalid_argument naming the problem for anything else.
RuntimeFile ParseCopyToVmValue(const std::vector<std::string>& strings);

// Appends `extra` to `files`, skipping entries whose destination (compared case-insensitively,
// as Windows does) is already present: the first entry for a destination wins.
void MergeRuntimeFiles(std::vector<RuntimeFile>& files, const std::vector<RuntimeFile>& extra);

// The APIs a GPU's runtime files can bring and the file (System32 name) each stands for: what
// `dxshim.io/requires` accepts by name and what the node labels advertise.
const std::map<std::string, std::string>& RequirableApis();

}  // namespace dxshim::devices
