// The interceptor `dxshim serve` installs (shim/gpu/gpu_interceptor.h), driven with serialized
// CRI requests as the relay hands them over, on a real inventory file, real runtime files in a
// temporary DriverStore folder and the real device snapshot (no GPU exists here: the devices are
// the example T4's, with the linux target). What it proves: a runtime file that vanished (a
// driver update moving its DriverStore folder) makes the interceptor re-read the devices at once
// and mount the new folder's files, or refuse naming the file, holding nothing, and never mounts
// a path that is not there; each sandbox's runtime handler is learned from RunPodSandbox.
#include "shim/gpu/gpu_interceptor.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "devices/inventory_file.h"
#include "devices/make_device_source.h"
#include "shim/gpu/host_files.h"
#include "tests/support/temp_dir.h"

namespace dxshim {
namespace {

namespace fs = std::filesystem;

devices::AllocationPolicy ThreePodsPerGpu() {
  devices::AllocationPolicy policy;
  policy.max_containers_per_device = 3;
  return policy;
}

class GpuInterceptorTest : public testing::Test {
 protected:
  GpuInterceptorTest() {
    WriteStore("store-1", "driver 1");
    WriteInventory("store-1");
    devices::SnapshotOptions options;
    options.loaded = [this](const auto& d) { host_files_.Observe(d); };
    snapshot_ = std::make_unique<devices::DeviceSnapshot>(
        devices::MakeDeviceSource("inventory:" + dir_ / "inventory.json"), options);
    ledger_.BeginResync();
    ledger_.FinishResync({});
    TargetOptions target;
    target.host_file = [this](const std::string& p) { return host_files_.Check(p); };
    target.vm_runtime_handlers = {"vm"};
    interceptor_ =
        std::make_unique<GpuInterceptor>(*snapshot_, ledger_, target, nullptr, &handlers_);
  }

  void WriteStore(const std::string& name, const std::string& content) {
    fs::create_directories(dir_ / name);
    std::ofstream(dir_ / (name + "/nvapi64.dll")) << content;
    std::ofstream(dir_ / (name + "/nvcuda_loader64.dll")) << content;
  }
  // The inventory as discovery would report the driver in `store`.
  void WriteInventory(const std::string& store) {
    auto d =
        devices::LoadInventoryFile(DXSHIM_SOURCE_DIR "/deploy/examples/inventories/nvidia-t4.yaml");
    d.at(0).driver_store = dir_ / store;
    d.at(0).system32 = {{"nvapi64.dll", "nvapi64.dll"}, {"nvcuda_loader64.dll", "nvcuda.dll"}};
    d.at(0).syswow64.clear();
    std::ofstream(dir_ / "inventory.json") << devices::WriteInventoryJson(d);
  }

  // CreateContainer of a GPU pod in `sandbox`, as kubelet sends it; the runtime's answer is
  // success (the reservation is committed) when the interceptor forwarded it.
  Interception Create(const std::string& sandbox) {
    runtime::v1::CreateContainerRequest r;
    r.set_pod_sandbox_id(sandbox);
    r.mutable_config()->mutable_metadata()->set_name("app");
    r.mutable_sandbox_config()->mutable_metadata()->set_name(sandbox);
    r.mutable_sandbox_config()->mutable_metadata()->set_namespace_("default");
    (*r.mutable_sandbox_config()->mutable_annotations())["dxshim.io/gpu"] = "1";
    handlers_.Started(sandbox, "");
    std::string bytes;
    r.SerializeToString(&bytes);
    auto i = interceptor_->Intercept(kCreateContainerMethod, bytes);
    if (i.on_result) {
      runtime::v1::CreateContainerResponse created;
      created.set_container_id("c-" + sandbox);
      i.on_result(grpc::Status::OK, created.SerializeAsString());
    }
    return i;
  }
  static std::vector<std::string> Mounted(const Interception& i) {
    runtime::v1::CreateContainerRequest r;
    EXPECT_TRUE(r.ParseFromString(i.request));
    std::vector<std::string> sources;
    for (const auto& m : r.config().mounts()) sources.push_back(m.host_path());
    return sources;
  }

  test::TempDir dir_;
  HostFiles host_files_{config::Target::kLinux};
  std::unique_ptr<devices::DeviceSnapshot> snapshot_;
  Ledger ledger_{ThreePodsPerGpu()};
  SandboxHandlers handlers_;
  std::unique_ptr<GpuInterceptor> interceptor_;
};

TEST_F(GpuInterceptorTest, ADriverUpdateBetweenTwoCreatesGivesTheNewFilesOrAClearError) {
  auto first = Create("pod-1");
  ASSERT_EQ(first.action, Interception::Action::kReplace) << first.status.error_message();
  EXPECT_EQ(Mounted(first), (std::vector<std::string>{dir_ / "store-1/nvapi64.dll",
                                                      dir_ / "store-1/nvcuda_loader64.dll"}));

  // A driver update: new DriverStore folder, the old one gone, discovery reports the new one;
  // the snapshot's own refresh has not run (it is never started here).
  fs::rename(dir_ / "store-1", dir_ / "store-2");
  std::ofstream(dir_ / "store-2/nvapi64.dll") << "driver 2";
  WriteInventory("store-2");
  auto second = Create("pod-2");
  ASSERT_EQ(second.action, Interception::Action::kReplace) << second.status.error_message();
  EXPECT_EQ(Mounted(second), (std::vector<std::string>{dir_ / "store-2/nvapi64.dll",
                                                       dir_ / "store-2/nvcuda_loader64.dll"}));
  EXPECT_FALSE(fs::exists(dir_ / "store-1"));

  // The folder moves again and nothing reports the new one: a clear error naming the file,
  // nothing mounted, nothing held, nothing created where the file was.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // past the re-read limit
  fs::rename(dir_ / "store-2", dir_ / "store-3");
  auto refused = Create("pod-3");
  ASSERT_EQ(refused.action, Interception::Action::kReject);
  EXPECT_EQ(refused.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(refused.status.error_message().find(dir_ / "store-2/nvapi64.dll"), std::string::npos)
      << refused.status.error_message();
  EXPECT_NE(refused.status.error_message().find("are gone"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "store-2"));

  // Back in place: the next pod gets the GPU's last slot (3 per GPU: pod-3 held none).
  fs::rename(dir_ / "store-3", dir_ / "store-2");
  EXPECT_EQ(Create("pod-4").action, Interception::Action::kReplace);
  auto full = Create("pod-5");
  EXPECT_EQ(full.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << full.status.error_message();
}

TEST_F(GpuInterceptorTest, LearnsEachSandboxsRuntimeHandlerFromRunPodSandbox) {
  const std::string method = "/runtime.v1.RuntimeService/RunPodSandbox";
  ASSERT_TRUE(interceptor_->Wants(method));
  runtime::v1::RunPodSandboxRequest run;
  run.set_runtime_handler("vm");
  auto i = interceptor_->Intercept(method, run.SerializeAsString());
  EXPECT_EQ(i.action, Interception::Action::kForward);  // never changed
  ASSERT_TRUE(i.on_result);
  runtime::v1::RunPodSandboxResponse started;
  started.set_pod_sandbox_id("sandbox-vm");
  i.on_result(grpc::Status::OK, started.SerializeAsString());
  EXPECT_EQ(handlers_.Find("sandbox-vm"), "vm");
  // A failed RunPodSandbox teaches nothing; RemovePodSandbox forgets.
  i = interceptor_->Intercept(method, run.SerializeAsString());
  i.on_result(grpc::Status(grpc::StatusCode::INTERNAL, "no"), "");
  runtime::v1::RemovePodSandboxRequest remove;
  remove.set_pod_sandbox_id("sandbox-vm");
  i = interceptor_->Intercept("/runtime.v1.RuntimeService/RemovePodSandbox",
                              remove.SerializeAsString());
  i.on_result(grpc::Status::OK, "");
  EXPECT_FALSE(handlers_.Find("sandbox-vm").has_value());
}

}  // namespace
}  // namespace dxshim
