#include "shim/install/install_step.h"

#include <array>
#include <utility>

namespace dxshim::install {
namespace {

using std::chrono::milliseconds;

bool Running(NodeSystem& node, const std::string& name) {
  const auto service = node.Service(name);
  return service && service->running;
}

void Write(const Step& step, NodeSystem& node) {
  const auto now = CurrentValue(node, step.change);
  const auto after = step.remove ? std::nullopt : std::optional(step.change.after);
  if (now == after) return;
  if (now != step.change.before) {
    throw NodeError(step.change.Describe() +
                    " changed meanwhile: it holds neither the value dxshim found there nor the "
                    "one it writes");
  }
  WriteValue(node, step.change, after);
}

void Create(const Step& step, NodeSystem& node) {
  if (const auto existing = node.Service(step.spec.name)) {
    if (existing->command_line == step.spec.command_line) return;
    throw NodeError("service " + step.spec.name +
                    " exists already with another command line: " + existing->command_line);
  }
  node.RegisterService(step.spec);
}

void WaitPipe(const Step& step, StepContext& c) {
  const auto deadline = std::chrono::steady_clock::now() + c.timeout;
  while (true) {
    const auto state = step.service.empty() ? std::nullopt : c.node.Service(step.service);
    const auto server = c.node.PipeServer(step.pipe);
    if (server && (step.service.empty() || (state && *server == state->pid))) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      throw NodeError(step.pipe + " is not served" +
                      (step.service.empty() ? "" : " by service " + step.service) +
                      (server ? " (its server is process " + std::to_string(*server) + ")" : "") +
                      " after " + std::to_string(c.timeout.count() / 1000) + " s");
    }
    c.node.Sleep(milliseconds(20));
  }
}

void WaitRuntime(const Step& step, StepContext& c) {
  if (!c.probe) throw NodeError("no way to make a CRI call through " + step.pipe);
  const auto deadline = std::chrono::steady_clock::now() + c.timeout;
  while (!c.probe->RuntimeAnswers(step.pipe, milliseconds(2000))) {
    if (std::chrono::steady_clock::now() >= deadline) {
      throw NodeError("no CRI call through " + step.pipe + " was answered by the runtime in " +
                      std::to_string(c.timeout.count() / 1000) + " s");
    }
    c.node.Sleep(milliseconds(20));
  }
}

}  // namespace

std::string_view StepKindName(Step::Kind kind) {
  for (const auto& [k, name] : kStepKindNames) {
    if (k == kind) return name;
  }
  return "write";
}

std::string Step::Describe() const {
  switch (kind) {
    case Kind::kWrite:
      return (remove ? "remove " : "write ") + change.Describe();
    case Kind::kCreateService:
      return "create service " + spec.name;
    case Kind::kDeleteService:
      return "delete service " + service;
    case Kind::kStop:
      return "stop service " + service;
    case Kind::kStart:
      return "start service " + service;
    case Kind::kRequestStart:
      return "ask service " + service + " to start";
    case Kind::kWaitPipe:
      return "wait for " + pipe + (service.empty() ? "" : " served by " + service);
    case Kind::kWaitRuntime:
      return "wait for the runtime to answer through " + pipe;
  }
  return "?";
}

void ApplyStep(const Step& step, StepContext& c) {
  switch (step.kind) {
    case Step::Kind::kCreateService:
      return Create(step, c.node);
    case Step::Kind::kDeleteService:
      if (!c.node.Service(step.service)) return;
      if (Running(c.node, step.service)) c.node.StopAndWait(step.service, c.timeout);
      return c.node.UnregisterService(step.service);
    case Step::Kind::kStop:
      if (Running(c.node, step.service)) c.node.StopAndWait(step.service, c.timeout);
      return;
    case Step::Kind::kStart:
      if (!Running(c.node, step.service)) c.node.StartAndWait(step.service, c.timeout);
      return;
    case Step::Kind::kRequestStart:
      if (!Running(c.node, step.service)) c.node.RequestStart(step.service);
      return;
    case Step::Kind::kWaitPipe:
      return WaitPipe(step, c);
    case Step::Kind::kWaitRuntime:
      return WaitRuntime(step, c);
    case Step::Kind::kWrite:
      return Write(step, c.node);
  }
}

void RunSteps(std::vector<Step>& steps, StepContext& c) {
  for (std::size_t i = 0; i < steps.size(); ++i) {
    Step& step = steps[i];
    if (step.state == Step::State::kDone) continue;
    if (c.say) c.say(step.Describe());
    step.state = Step::State::kBegun;
    step.begun_unix_ms = c.node.NowUnixMs();
    c.save();
    if (c.interrupt) c.interrupt(i, StepPoint::kBegun);
    ApplyStep(step, c);
    if (c.interrupt) c.interrupt(i, StepPoint::kApplied);
    step.state = Step::State::kDone;
    step.done_unix_ms = c.node.NowUnixMs();
    c.save();
    if (c.interrupt) c.interrupt(i, StepPoint::kDone);
  }
}

}  // namespace dxshim::install
