// One step of a procedure that `dxshim install`, `uninstall` or a rollback runs on a node: a value
// written (with the value it replaces), dxshim's service created or deleted, a service stopped or
// started, a pipe or the runtime waited for. Each step can be applied again after an
// interruption: a write whose value is already there does nothing, a service already in the
// state does nothing. The journal (install_journal.h) records each step as begun before it is
// applied and as done after, so that a re-run knows where to go on.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "shim/install/node_change.h"
#include "shim/install/system/dxshim_probe.h"
#include "shim/install/system/node_system.h"

namespace dxshim::install {

struct Step {
  enum class Kind {
    kWrite,          // change.target: change.before (expected there now) -> change.after
    kCreateService,  // dxshim's service, as `spec`
    kDeleteService,  // `service` (stopped first)
    kStop,           // `service` stopped (and waited for)
    kStart,          // `service` started (and waited for)
    kRequestStart,   // `service` asked to start, not waited for (dxshim waiting for its pipe)
    kWaitPipe,       // `pipe` served (by `service`'s process, when set)
    kWaitRuntime,    // a CRI call through `pipe` answered by the runtime
  };
  enum class State { kPending, kBegun, kDone };

  Kind kind = Kind::kWrite;
  NodeChange change;    // kWrite
  bool remove = false;  // kWrite: the target (a file that did not exist) is removed instead
  ServiceSpec spec;     // kCreateService
  std::string service;
  std::string pipe;
  bool opens_window = false;   // kubelet has no runtime from this step on...
  bool closes_window = false;  // ...until this one is done
  State state = State::kPending;
  std::int64_t begun_unix_ms = 0;
  std::int64_t done_unix_ms = 0;

  std::string Describe() const;  // "stop service containerd", "write file C:\x.toml", ...
  bool operator==(const Step&) const = default;
};

// Each kind's name, as the journal writes it and messages show it.
inline constexpr std::array<std::pair<Step::Kind, std::string_view>, 8> kStepKindNames{{
    {Step::Kind::kWrite, "write"},
    {Step::Kind::kCreateService, "create-service"},
    {Step::Kind::kDeleteService, "delete-service"},
    {Step::Kind::kStop, "stop"},
    {Step::Kind::kStart, "start"},
    {Step::Kind::kRequestStart, "request-start"},
    {Step::Kind::kWaitPipe, "wait-pipe"},
    {Step::Kind::kWaitRuntime, "wait-runtime"},
}};
std::string_view StepKindName(Step::Kind kind);  // "write", "create-service", ...

// Where a procedure may be interrupted, for the interruption tests: after a step is journaled as
// begun, after it is applied, after it is journaled as done.
enum class StepPoint { kBegun, kApplied, kDone };

using Say = std::function<void(const std::string&)>;
// Tests only: called at each point of each step; it may end the process there.
using Interrupt = std::function<void(std::size_t step, StepPoint point)>;

struct StepContext {
  NodeSystem& node;
  DxshimProbe* probe = nullptr;  // kWaitRuntime needs it
  std::chrono::milliseconds timeout{std::chrono::seconds(90)};
  Say say;
  std::function<void()> save;  // writes the journal (the steps' states are part of it)
  Interrupt interrupt;         // tests only; may not return
};

// Applies one step. Throws NodeError naming the step and what went wrong: a write whose target
// holds neither its `before` nor its `after` (changed meanwhile), a service that does not reach
// its state in time, a pipe nobody serves.
void ApplyStep(const Step& step, StepContext& context);

// Runs every step that is not done, in order: journaled as begun, applied, journaled as done.
// Throws what ApplyStep throws, the step's state left as begun.
void RunSteps(std::vector<Step>& steps, StepContext& context);

}  // namespace dxshim::install
