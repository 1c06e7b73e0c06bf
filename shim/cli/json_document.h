// crictl's JSON files, edited in place: `dxshim rewrite` reads them as YAML nodes (JSON is
// YAML), appends what the injection plan adds, and writes JSON again, so every field dxshim does
// not know (linux/windows sections, mount propagation, ...) comes out as it went in.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

#include "shim/base/json_document.h"
#include "shim/gpu/injection.h"

namespace dxshim {

// Applies the plan to a crictl container config document (snake_case field names).
void ApplyPlanToJson(const InjectionPlan& plan, YAML::Node& container);

}  // namespace dxshim
