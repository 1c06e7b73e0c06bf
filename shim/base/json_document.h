// JSON documents held as yaml-cpp nodes (JSON is YAML, so one reader takes both) and written by one
// printer: `dxshim rewrite`'s crictl files and the install journal.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace dxshim {

// The tag yaml-cpp gives a quoted scalar; set on a node that is made, it makes EmitJson write the
// scalar as a JSON string even when it reads as a number, a boolean or null.
inline constexpr char kJsonStringTag[] = "!";

// Pretty-printed JSON (2-space indent), keys in the order the node holds them. Scalars tagged
// kJsonStringTag stay strings; plain numbers, true, false and null stay what they were; every
// other scalar is written as a string.
std::string EmitJson(const YAML::Node& node);

}  // namespace dxshim
