// The scenarios of `octet bench train`: which training runs each one makes
// (torch-free, so that a build without LibTorch still knows and checks them).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "train/options.h"

namespace octet {

struct BenchTrainOptions {
  std::string scenario;
  std::string out = "bench-train";
  TrainOptions base;  // the common training options, lab 2 defaults
  int max_workers = 0;  // workers: 0 -> the machine's cores
  std::string batch_sizes = "32,128,512,2048,8192";
  std::string processes = "1,2,4";
  int port = 0;  // scaling: the rendezvous port of the first `octet launch` (0: launch picks one)
};

// The lab 2 recipe (../shared/docs/SEEDS.md): ResNet-18 on CIFAR-10, SGD lr 0.1,
// momentum 0.9, weight decay 5e-4, batch 128, constant lr, 5 epochs.
TrainOptions lab_training_defaults();

std::vector<std::string> scenario_names();
std::string scenario_help();

struct PlannedRun {
  std::string label;
  nlohmann::json keys = nlohmann::json::object();  // the row's setting columns
  TrainOptions options;
  int processes = 0;       // 0: in this process; N >= 1: `octet launch -n N`
  std::string skipped;     // why this run is not made here ("" : it runs)
  int same_as = -1;        // a run of the same options earlier in the plan: its record is reused
};

// Whether this machine can train on CUDA (LibTorch's answer), and whether
// this build can train data-parallel on each device.
struct DeviceChoice {
  bool cuda = false;
  int cuda_devices = 0;      // GPUs LibTorch sees
  std::string cuda_missing;  // why not, when !cuda
  std::string cpu_process_group_missing, cuda_process_group_missing;  // why not ("": it can)
};

// The runs of `o.scenario` in order; fails on an unknown scenario or option
// values it cannot use, before anything runs.
std::vector<PlannedRun> plan_scenario(const BenchTrainOptions& o, const DeviceChoice& devices);

}  // namespace octet
