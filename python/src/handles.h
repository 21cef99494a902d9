// The objects the Python module hands out: a float checkpoint with its float
// inference model, and a quantized model with the engines made for it.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "graph/float_executor.h"
#include "models/checkpoint.h"
#include "qmodel/quantized_model.h"
#include "runtime/engine.h"

namespace octet::python {

class PyCheckpoint {
 public:
  PyCheckpoint(std::string path, Checkpoint checkpoint)
      : path_(std::move(path)),
        checkpoint_(std::move(checkpoint)),
        folded_(fold_for_inference(checkpoint_.graph, checkpoint_.params)),
        executor_(folded_) {}

  const std::string& path() const { return path_; }
  const Checkpoint& checkpoint() const { return checkpoint_; }
  const FloatModel& folded() const { return folded_; }
  const FloatExecutor& executor() const { return executor_; }
  ActShape input() const { return executor_.shapes()[0]; }
  int64_t classes() const { return executor_.shapes().back().c; }
  ActShape output() const { return executor_.shapes().back(); }

 private:
  std::string path_;
  Checkpoint checkpoint_;
  FloatModel folded_;  // batch norms folded: the weights calibration and quantization see
  FloatExecutor executor_;
};

class PyQuantized {
 public:
  explicit PyQuantized(QuantizedModel model) : model_(std::move(model)), shapes_(model_.graph.shapes()) {}

  const QuantizedModel& model() const { return model_; }
  const std::vector<ActShape>& shapes() const { return shapes_; }
  ActShape input() const { return shapes_[0]; }
  ActShape output() const { return shapes_.back(); }

  // The engine of `backend` (runtime/engine.h), made on first use and kept.
  // Called without the GIL: several Python threads may ask at once.
  const Engine& engine(const std::string& backend) {
    const std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<Engine>& engine = engines_[backend];
    if (!engine) engine = make_engine(model_, backend);
    return *engine;
  }

  // The int32 logits of `batch` images on `backend`, per output (Graph::outputs). Called without the GIL,
  // so several Python threads may call one model at once: their runs are
  // serialised by the lock (python/tests/test_threads.py checks they give the
  // bits of one thread).
  std::vector<std::vector<int32_t>> run(const float* x, int64_t batch, int64_t batch_size,
                                        const std::string& backend) {
    const Engine& e = engine(backend);
    const std::lock_guard<std::mutex> lock(mutex_);
    const int64_t numel = input().numel();
    std::vector<std::vector<int32_t>> logits;
    for (int o : model_.graph.outputs()) logits.emplace_back(static_cast<size_t>(batch * shapes_[o].numel()));
    for (int64_t first = 0; first < batch; first += batch_size) {
      const int64_t count = std::min(batch_size, batch - first);
      const std::vector<Int32Tensor> batch_logits = e.run_outputs(x + first * numel, count);
      for (size_t k = 0; k < logits.size(); ++k)
        std::copy(batch_logits[k].data.begin(), batch_logits[k].data.end(),
                  logits[k].begin() + first * batch_logits[k].numel() / count);
    }
    return logits;
  }

 private:
  QuantizedModel model_;
  std::vector<ActShape> shapes_;
  std::mutex mutex_;  // engines may keep per-run state (device buffers)
  std::map<std::string, std::unique_ptr<Engine>> engines_;
};

}  // namespace octet::python
