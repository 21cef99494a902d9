#include "train/process_group.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>
// The collectives' base class, declared whichever process groups this build has.
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif

#include <cstdlib>
#include <cstring>

#include "common/error.h"

// Gloo's headers ship with Debian's libtorch-dev (libgloo-dev) but not with
// pip's LibTorch, whose build does not install them; NCCL's process group
// needs a CUDA LibTorch built with it and NCCL's own header (pip puts it in
// another package, not on LibTorch's include path).
#if defined(USE_C10D_GLOO) && __has_include(<gloo/config.h>)
#define OCTET_HAVE_GLOO 1
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#if defined(USE_C10D_NCCL) && __has_include(<nccl.h>)
#define OCTET_HAVE_NCCL 1
#include <c10/cuda/CUDAFunctions.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace octet {

namespace {

// LibTorch 2 split the collectives out of ProcessGroup into per-backend Backends.
#if TORCH_VERSION_MAJOR >= 2
using CollectiveBackend = c10d::Backend;
#else
using CollectiveBackend = c10d::ProcessGroup;
#endif

const char* environment(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

int integer_variable(const char* name, int fallback) {
  const char* text = environment(name);
  if (!text) return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  check(*end == '\0' && value >= 0 && value <= 1000000,
        std::string("environment variable ") + name + "='" + text + "' is not a non-negative integer");
  return static_cast<int>(value);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

DistributedEnvironment read_distributed_environment() {
  DistributedEnvironment env;
  const bool has_rank = environment("RANK") != nullptr, has_size = environment("WORLD_SIZE") != nullptr;
  if (!has_rank && !has_size) return env;
  check(has_rank && has_size, std::string(has_rank ? "RANK" : "WORLD_SIZE") + " is set but " +
                                  (has_rank ? "WORLD_SIZE" : "RANK") +
                                  " is not: data-parallel training needs both (torchrun or octet launch set them)");
  env.world_size = integer_variable("WORLD_SIZE", 1);
  env.rank = integer_variable("RANK", 0);
  check(env.world_size >= 1, "WORLD_SIZE must be at least 1");
  check(env.rank < env.world_size, "RANK=" + std::to_string(env.rank) + " must be below WORLD_SIZE=" +
                                       std::to_string(env.world_size) + " (ranks count from 0)");
  env.local_rank = integer_variable("LOCAL_RANK", env.rank);
  env.local_world_size = integer_variable("LOCAL_WORLD_SIZE", 1);
  check(env.local_world_size >= 1, "LOCAL_WORLD_SIZE must be at least 1");
  if (!env.distributed()) return env;
  const char* addr = environment("MASTER_ADDR");
  check(addr != nullptr, "WORLD_SIZE=" + std::to_string(env.world_size) +
                             " needs MASTER_ADDR (the address of the machine running rank 0)");
  env.master_addr = addr;
  check(environment("MASTER_PORT") != nullptr, "WORLD_SIZE=" + std::to_string(env.world_size) +
                                                  " needs MASTER_PORT (a free TCP port on rank 0's machine)");
  env.master_port = integer_variable("MASTER_PORT", 0);
  check(env.master_port >= 1 && env.master_port <= 65535,
        "MASTER_PORT=" + std::to_string(env.master_port) + " is not a TCP port (1-65535)");
  return env;
}

std::string process_group_missing(const std::string& device) {
  if (device == "cuda") {
#ifdef OCTET_HAVE_NCCL
    return "";
#elif defined(USE_C10D_NCCL)
    return "octet was built without NCCL's header (nccl.h), so it has no NCCL process group";
#else
    return "this LibTorch was built without NCCL (USE_C10D_NCCL)";
#endif
  }
#ifdef OCTET_HAVE_GLOO
  return "";
#elif defined(USE_C10D_GLOO)
  return "octet was built without Gloo's headers (gloo/config.h; pip's LibTorch leaves them out), so it has no Gloo "
         "process group";
#else
  return "this LibTorch was built without Gloo (USE_C10D_GLOO)";
#endif
}

torch::Device rank_device(const std::string& device, const DistributedEnvironment& env) {
  if (device != "cuda") return torch::Device(torch::kCPU);
  check(torch::cuda::is_available(), "--device cuda: this LibTorch has no CUDA or no GPU is visible");
  if (!env.distributed()) return torch::Device(torch::kCUDA);
#ifndef OCTET_HAVE_NCCL
  fail("--device cuda with WORLD_SIZE=" + std::to_string(env.world_size) + ": " + process_group_missing("cuda") +
       "; train on one GPU, or data-parallel on the CPU (Gloo)");
#else
  const int gpus = static_cast<int>(torch::cuda::device_count());
  check(env.local_rank < gpus, "LOCAL_RANK=" + std::to_string(env.local_rank) + " but only " +
                                   std::to_string(gpus) + " GPU(s) are visible: NCCL needs one GPU per rank");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank));
#endif
}

struct ProcessGroup::Backend {
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<CollectiveBackend> group;
};

ProcessGroup::ProcessGroup(const DistributedEnvironment& env, const torch::Device& device,
                           std::chrono::seconds timeout)
    : env_(env), timeout_(timeout), backend_(std::make_unique<Backend>()) {
  const std::string where = "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) + ": ";
  // Before the rendezvous: every rank stops at once, none waits on the others.
  const std::string missing = process_group_missing(device.is_cuda() ? "cuda" : "cpu");
  check(missing.empty(), where + missing);
  const auto fail_to_join = [&](const std::string& cause) {
    fail(where + "joining the process group at MASTER_ADDR:MASTER_PORT = " + env.master_addr + ":" +
         std::to_string(env.master_port) + " failed within --dist-timeout " + std::to_string(timeout.count()) +
         " s (did all " + std::to_string(env.world_size) + " ranks start? is rank 0 reachable?): " +
         first_line(cause));
  };
  try {
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<uint16_t>(env.master_port);
    store_options.isServer = env.rank == 0;
    store_options.numWorkers = static_cast<size_t>(env.world_size);
    store_options.timeout = timeout;
    backend_->store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
    if (device.is_cuda()) {
#ifdef OCTET_HAVE_NCCL
      c10::cuda::set_device(device.index());
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      backend_->group = c10::make_intrusive<c10d::ProcessGroupNCCL>(backend_->store, env.rank, env.world_size, options);
#endif
    } else {
#ifdef OCTET_HAVE_GLOO
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      // As torch.distributed does: GLOO_SOCKET_IFNAME names the network interfaces;
      // otherwise one machine talks over loopback and several over the hostname's address.
      if (const char* interfaces = environment("GLOO_SOCKET_IFNAME")) {
        std::string names = interfaces;
        for (size_t start = 0; start <= names.size();) {
          const size_t comma = std::min(names.find(',', start), names.size());
          options->devices.push_back(
              c10d::ProcessGroupGloo::createDeviceForInterface(names.substr(start, comma - start)));
          start = comma + 1;
        }
      } else if (env.master_addr == "127.0.0.1" || env.master_addr == "localhost") {
        options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      } else {
        options->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      }
      backend_->group = c10::make_intrusive<c10d::ProcessGroupGloo>(backend_->store, env.rank, env.world_size, options);
#endif
    }
  } catch (const c10::Error& e) {
    fail_to_join(e.what_without_backtrace());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {  // LibTorch 1.13's socket errors are not c10::Errors
    fail_to_join(e.what());
  }
}

ProcessGroup::~ProcessGroup() = default;

void ProcessGroup::fail_collective(const std::string& what, const std::string& cause) const {
  fail("data-parallel rank " + std::to_string(env_.rank) + " of " + std::to_string(env_.world_size) + ": " + what +
       " failed (another rank exited, or was silent for more than --dist-timeout " +
       std::to_string(timeout_.count()) + " s): " + first_line(cause));
}

// Runs `collective`, turning c10d's failures (c10::Errors, and Gloo's own
// exceptions, which some paths let through) into an octet error naming the rank.
template <typename Collective>
auto ProcessGroup::guarded(const char* what, Collective&& collective) const -> decltype(collective()) {
  try {
    return collective();
  } catch (const c10::Error& e) {
    fail_collective(what, e.what_without_backtrace());
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    fail_collective(what, e.what());
  }
}

void ProcessGroup::Pending::wait() {
  if (!work_.defined()) return;
  group_->guarded("all-reduce", [&] { work_->wait(); });
  work_.reset();
}

ProcessGroup::Pending ProcessGroup::all_reduce_sum(torch::Tensor tensor) const {
  std::vector<torch::Tensor> tensors{std::move(tensor)};
  return guarded("all-reduce", [&] { return Pending(this, backend_->group->allreduce(tensors)); });
}

void ProcessGroup::broadcast_from_rank0(const std::vector<torch::Tensor>& tensors) const {
  torch::NoGradGuard no_grad;
  guarded("broadcast from rank 0", [&] {
    for (const torch::Tensor& t : tensors) {
      std::vector<torch::Tensor> one{t.contiguous()};  // collectives want dense tensors (channels_last is not)
      backend_->group->broadcast(one)->wait();
      if (!one[0].is_same(t)) t.copy_(one[0]);
    }
  });
}

}  // namespace octet
