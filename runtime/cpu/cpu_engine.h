// The CPU integer runtime (backend "cpu"): executes a quantized model with
// int8 activations, int32 accumulation and common/requantize.h, using all
// cores (OpenMP: a batch of as many images as threads or more is shared out,
// each thread running every node on its images; a smaller one, node by node),
// each node by its kernel from runtime/cpu/kernel.h's table.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "qmodel/quantized_model.h"
#include "runtime/cpu/cache_line_vector.h"
#include "runtime/cpu/kernel.h"
#include "runtime/engine.h"

namespace octet {

class CpuEngine : public Engine {
 public:
  explicit CpuEngine(const QuantizedModel& model);  // packs the weights once
  // `model` shares `packed`'s graph and int8 weights and differs only in
  // scales, biases and multipliers: the kernels' choice and what they
  // prepared (packed weights) are shared, not made again (the quantizer's
  // amax search builds one engine per candidate). Fails when the graph or a
  // weight differs.
  CpuEngine(const QuantizedModel& model, const CpuEngine& packed);

  // Threads: run and dequantize_logits may be called from several threads at
  // once on one engine, and each run gives the bits it gives alone
  // (tests/runtime/test_engine_threads.cpp); the activation buffers of a finished run
  // are kept for the next one.
  Int32Tensor run(const float* input, int64_t batch, const Hook& hook = {}) const override;
  std::vector<Int32Tensor> run_outputs(const float* input, int64_t batch, const Hook& hook = {}) const override;

  // Runs nodes [first, end) only. `input` is read when first is 0; every node
  // before `first` that a node from `first` on reads has its int8 output
  // (NHWC, `batch` images; int16 where wide) at given(node). Returns the
  // last output's logits when `end` is past it, else an empty tensor. `first` must be a resume point.
  // The hook sees a float segment's values (QuantizedModel::float_outputs)
  // rounded to int8 at their scale, which the run itself does not do.
  using Given = std::function<const int8_t*(int node)>;
  Int32Tensor run_nodes(const float* input, int64_t batch, int first, int end, const Given& given,
                        const Hook& hook = {}) const;
  // As run_nodes, every output's logits (none where `end` is not past them; it ends before them or at the end).
  std::vector<Int32Tensor> run_nodes_outputs(const float* input, int64_t batch, int first, int end,
                                             const Given& given, const Hook& hook = {}) const;

  std::string backend() const override { return backend_names::kCpu; }
  const QuantizedModel& model() const override { return model_; }
  const std::vector<ActShape>& shapes() const { return shapes_; }
  std::vector<double> time_runs(const float* input, int64_t batch, int warmup, int iterations) override;
  // The median of each node's time, from the moments the hook sees it finish.
  std::vector<NodeTiming> profile(const float* input, int64_t batch, int warmup, int iterations) override;
  // The kernel that runs `node` on the kernel path in use.
  const char* kernel_name(int node) const;
  // The last node at or before `node` from which run_nodes can start: none
  // before it holds a float segment's value that it or a later node reads
  // (those are not int8, so cannot be given). Never decreases with `node`.
  int resume_point(int node) const;

  // "" when the CPU runtime has a portable kernel for every node of `model`,
  // else the first node it cannot run and every kernel's reason.
  static std::string why_unsupported(const QuantizedModel& model);

 private:
  // Per node, the kernels of cpu::kernel_table() that can run it (in table
  // order) and what each prepared (shared by kernels with one prepare).
  struct NodeKernels {
    std::vector<const cpu::Kernel*> kernels;
    std::vector<std::shared_ptr<const cpu::KernelData>> data;
  };
  void plan_kernels();
  void plan_buffers();
  void bind_kernels();
  // The kernel that runs `node` on the kernel path in use, and its data.
  size_t pick(int node) const;
  // Images [first, first + count) of a batch.
  struct Images {
    int64_t first, count;
  };
  // run_nodes' nodes on `images` of the batch in `buffers` (the logits: all
  // the batch's), on the calling thread and those of the kernels' own regions.
  void run_images(const float* input, const Images& images, int first, int end, const Given& given, const Hook& hook,
                  const std::vector<cpu::CacheLineBytes>& buffers, std::vector<Int32Tensor>& outputs) const;


  QuantizedModel model_;
  std::vector<ActShape> shapes_;
  std::shared_ptr<const std::vector<NodeKernels>> kernels_;
  bool small_network_;  // few multiply-adds per image: a batch is shared out unevenly too (cpu_engine.cpp)
  // Per node, what each of its kernels' bind made for this engine's scales.
  std::vector<std::vector<std::shared_ptr<const cpu::KernelData>>> bound_;
  std::vector<int> last_use_;                // last node reading each value
  std::vector<bool> float_outputs_;          // QuantizedModel::float_outputs: values held as float
  std::vector<int> resume_points_;           // resume_point of each node
  // Activations share buffers: node i writes buffer slot_[i] (-1: the
  // logits), which holds slot_bytes_[slot] bytes per sample, and a buffer is
  // reused once the last reader of its value has run.
  std::vector<int> slot_;
  std::vector<int64_t> slot_bytes_;
  struct Buffers;
  std::shared_ptr<Buffers> spare_;  // the buffers of the last finished run
};

}  // namespace octet
