// Which CRI methods are unary. They take the single-batch unary path; anything else (streams,
// methods of newer CRI versions, other services) takes the general streaming relay, which is
// correct for every kind of call, only slower.
#pragma once

#include <string_view>

namespace dxshim {

// True for the unary methods of runtime.v1 RuntimeService and ImageService, e.g.
// "/runtime.v1.RuntimeService/Version".
bool IsUnaryCriMethod(std::string_view method);

// True for methods whose calls are long-lived server streams (GetContainerEvents, Stream*): at
// shutdown they are cancelled at once rather than given the grace period.
bool IsLongLivedStream(std::string_view method);

}  // namespace dxshim
