#include "runtime/cpu/cpu_engine.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>

#include "common/error.h"
#include "common/requantize.h"
#include "graph/op.h"
#include "runtime/cpu/cache_line_vector.h"
#include "runtime/cpu/idle_threads.h"

namespace octet {

namespace {
// What a new activation buffer holds until kernels write it: an int8 value
// (90) that few outputs take, so that tests see a value left unwritten.
constexpr int kUnwrittenByte = 0x5A;

// Index in `free` of the buffer for a value of `need` bytes: the smallest that
// holds it, else the largest (to be grown); -1 when none is free.
int pick_buffer(const std::vector<int>& free, const std::vector<int64_t>& bytes, int64_t need) {
  int best = -1;
  for (int k = 0; k < static_cast<int>(free.size()); ++k)
    if (bytes[free[k]] >= need && (best < 0 || bytes[free[k]] < bytes[free[best]])) best = k;
  if (best >= 0) return best;
  for (int k = 0; k < static_cast<int>(free.size()); ++k)
    if (best < 0 || bytes[free[k]] > bytes[free[best]]) best = k;
  return best;
}

// Into how many shares a run splits a batch: each thread runs the whole
// network on its share of the images, in one parallel region per run rather
// than one per layer, where small layers (a MobileNet's depthwise convs) had
// their threads wait on each other, or, where idle threads sleep, ran on one
// thread alone. Only where every thread gets images and not inside a
// parallel region already; and with near equal shares (a quarter apart at
// most), else a layer's own threads share its work better, unless the
// network is small and idle threads sleep, where each layer's region waits
// for a wake-up (ResNet-20 at 3 images on 2 threads: 0.70 ms node by node).
int image_shares(int64_t batch, bool small_network) {
  const int64_t threads = omp_get_max_threads();
  if (omp_in_parallel() || threads < 2 || batch < threads) return 1;
  const bool even = batch % threads == 0 || batch >= 4 * threads;
  return even || (small_network && !cpu::idle_threads_spin()) ? static_cast<int>(threads) : 1;
}

// Whether a network is small for image_shares: fewer than 2^27 multiply-adds
// per image (CIFAR's ResNets, 41 to 125 M, and MobileNetV2; not ImageNet's
// CNNs, from 300 M).
bool is_small_network(const Graph& g, const std::vector<ActShape>& shapes) {
  double macs = 0;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) macs += op_macs(g.nodes[i], shapes, i);
  return macs < double(int64_t{1} << 27);
}
}  // namespace

struct CpuEngine::Buffers {
  std::mutex mutex;  // guards `data` and `bytes` while they are handed between runs
  // On a cache line (cache_line_vector.h says why: the kernels' whole-vector
  // stores and residual loads); left uninitialised: every kernel writes all its output.
  std::vector<cpu::CacheLineBytes> data;
  std::vector<int64_t> bytes;
};

CpuEngine::CpuEngine(const QuantizedModel& model)
    : model_(model), shapes_(model.graph.shapes()), small_network_(is_small_network(model.graph, shapes_)) {
  model_.validate();
  plan_buffers();
  plan_kernels();
  bind_kernels();
}

namespace {
// The kernels of the table that can run node `index` (in table order), and
// why each of the others cannot, as "; name: why".
std::vector<const cpu::Kernel*> candidates(const cpu::NodeView& view, std::string* refusals) {
  if (view.quant().in_float) return {&cpu::float_node_kernel};
  std::vector<const cpu::Kernel*> out;
  for (const cpu::Kernel& k : cpu::kernel_table()) {
    if (k.op != view.node().op) continue;
    const std::string why = k.can_implement(view);
    if (why.empty())
      out.push_back(&k);
    else
      *refusals += std::string("; ") + k.name + ": " + why;
  }
  return out;
}

// "" when a portable kernel is among them, else why the node cannot run.
std::string without_portable(const cpu::NodeView& view, const std::vector<const cpu::Kernel*>& kernels,
                             const std::string& refusals) {
  for (const cpu::Kernel* k : kernels)
    if (k->path == cpu::KernelPath::Reference) return "";
  const Node& n = view.node();
  return std::string("no portable CPU kernel can run it") +
         (refusals.empty() ? std::string(" (the CPU kernel table has none for this operator)")
                           : " (" + refusals.substr(2) + ")") +
         ", at node '" + n.name + "' (" + op_name(n.op) + ")";
}
}  // namespace

std::string CpuEngine::why_unsupported(const QuantizedModel& model) {
  const std::vector<ActShape> shapes = model.graph.shapes();
  for (int i = 0; i < static_cast<int>(model.graph.nodes.size()); ++i) {
    const cpu::NodeView view{model, shapes, i};
    std::string refusals;
    const std::string why = without_portable(view, candidates(view, &refusals), refusals);
    if (!why.empty()) return why;
  }
  return "";
}

void CpuEngine::plan_kernels() {
  auto kernels = std::make_shared<std::vector<NodeKernels>>(model_.graph.nodes.size());
  for (int i = 0; i < static_cast<int>(model_.graph.nodes.size()); ++i) {
    const cpu::NodeView view{model_, shapes_, i};
    NodeKernels& chosen = (*kernels)[i];
    std::string refusals;
    chosen.kernels = candidates(view, &refusals);
    const std::string why = without_portable(view, chosen.kernels, refusals);
    check(why.empty(), "cpu runtime: " + why);
    for (size_t k = 0; k < chosen.kernels.size(); ++k) {
      const cpu::Kernel& kernel = *chosen.kernels[k];
      std::shared_ptr<const cpu::KernelData> data;
      for (size_t j = 0; j < k && kernel.prepare && !data; ++j)
        if (chosen.kernels[j]->prepare == kernel.prepare) data = chosen.data[j];
      if (kernel.prepare && !data) data = kernel.prepare(view);
      chosen.data.push_back(std::move(data));
    }
  }
  kernels_ = std::move(kernels);
}

// Every candidate's, not only the picked one's: the kernel path can change
// between runs (set_kernel_path).
void CpuEngine::bind_kernels() {
  bound_.assign(model_.graph.nodes.size(), {});
  for (int i = 0; i < static_cast<int>(bound_.size()); ++i) {
    const cpu::NodeView view{model_, shapes_, i};
    const NodeKernels& node = (*kernels_)[i];
    for (size_t k = 0; k < node.kernels.size(); ++k)
      bound_[i].push_back(node.kernels[k]->bind ? node.kernels[k]->bind(view, node.data[k].get()) : nullptr);
  }
}

// The path's own kernel, else, on the AVX-512 VNNI path, an AVX2 one (a
// dilated conv, which no VNNI kernel runs: every AVX-512 CPU has AVX2), else
// the portable one.
size_t CpuEngine::pick(int node) const {
  const std::vector<const cpu::Kernel*>& candidates = (*kernels_)[node].kernels;
  const cpu::KernelPath path = cpu::kernel_path();
  const auto first_on = [&](cpu::KernelPath p) {
    return std::find_if(candidates.begin(), candidates.end(), [&](const cpu::Kernel* k) { return k->path == p; });
  };
  auto found = first_on(path);
  if (found == candidates.end() && path == cpu::KernelPath::Avx512Vnni) found = first_on(cpu::KernelPath::Avx2);
  if (found == candidates.end()) found = first_on(cpu::KernelPath::Reference);
  check(found != candidates.end(), "cpu runtime: no kernel for node " + std::to_string(node));  // plan_kernels keeps one
  return static_cast<size_t>(found - candidates.begin());
}

CpuEngine::CpuEngine(const QuantizedModel& model, const CpuEngine& packed)
    : model_(model),
      shapes_(model.graph.shapes()),
      kernels_(packed.kernels_),
      small_network_(packed.small_network_) {
  model_.validate();
  const Graph& g = model_.graph;
  const Graph& h = packed.model_.graph;
  check(g.nodes.size() == h.nodes.size(), "cpu runtime: the model does not share the packed model's graph");
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    check(g.nodes[i].name == h.nodes[i].name && g.nodes[i].op == h.nodes[i].op && g.nodes[i].inputs == h.nodes[i].inputs,
          "cpu runtime: node '" + g.nodes[i].name + "' differs from the packed model's");
    check(model_.quant[i].weight.data == packed.model_.quant[i].weight.data &&
              model_.quant[i].in_float == packed.model_.quant[i].in_float,
          "cpu runtime: the weights of '" + g.nodes[i].name + "' differ from the packed model's");
  }
  plan_buffers();
  bind_kernels();
}

// Buffer plan: inputs are freed once their last reader has been placed.
void CpuEngine::plan_buffers() {
  const Graph& g = model_.graph;
  last_use_ = g.last_readers();
  float_outputs_ = model_.float_outputs();
  resume_points_.assign(g.nodes.size(), 0);
  for (int r = 1; r < static_cast<int>(g.nodes.size()); ++r) {
    bool resumable = true;
    for (int p = 0; p < r && resumable; ++p) resumable = !(float_outputs_[p] && last_use_[p] >= r);
    resume_points_[r] = resumable ? r : resume_points_[r - 1];
  }
  std::vector<int> free_slots;
  slot_.assign(g.nodes.size(), -1);
  for (int i = 0; i < g.first_output(); ++i) {
    const int64_t bytes = shapes_[i].numel() * (float_outputs_[i] ? int64_t(sizeof(float)) : model_.value_bytes(i));
    const int k = pick_buffer(free_slots, slot_bytes_, bytes);
    if (k < 0) {
      slot_[i] = static_cast<int>(slot_bytes_.size());
      slot_bytes_.push_back(bytes);
    } else {
      slot_[i] = free_slots[k];
      slot_bytes_[slot_[i]] = std::max(slot_bytes_[slot_[i]], bytes);
      free_slots.erase(free_slots.begin() + k);
    }
    for (int in : g.nodes[i].inputs)
      if (last_use_[in] == i) free_slots.push_back(slot_[in]);
  }
  spare_ = std::make_shared<Buffers>();
}

Int32Tensor CpuEngine::run(const float* input, int64_t batch, const Hook& hook) const {
  return run_nodes(input, batch, 0, static_cast<int>(model_.graph.nodes.size()), {}, hook);
}

std::vector<Int32Tensor> CpuEngine::run_outputs(const float* input, int64_t batch, const Hook& hook) const {
  return run_nodes_outputs(input, batch, 0, static_cast<int>(model_.graph.nodes.size()), {}, hook);
}

Int32Tensor CpuEngine::run_nodes(const float* input, int64_t batch, int first, int end, const Given& given,
                                 const Hook& hook) const {
  std::vector<Int32Tensor> outputs = run_nodes_outputs(input, batch, first, end, given, hook);
  return outputs.empty() ? Int32Tensor() : std::move(outputs.back());
}

std::vector<Int32Tensor> CpuEngine::run_nodes_outputs(const float* input, int64_t batch, int first, int end,
                                                      const Given& given, const Hook& hook) const {
  const Graph& g = model_.graph;
  const int nodes = static_cast<int>(g.nodes.size());
  check(first >= 0 && first <= end && (end <= g.first_output() || end == nodes) && (first == 0 || given),
        "cpu runtime: bad node range");
  check(resume_point(first) == first, "cpu runtime: cannot start at node " + std::to_string(first) +
                                          ": an earlier float segment's value is read from there on");
  Buffers buffers;
  {
    const std::lock_guard<std::mutex> lock(spare_->mutex);
    buffers.data.swap(spare_->data);
    buffers.bytes.swap(spare_->bytes);
  }
  buffers.data.resize(slot_bytes_.size());
  buffers.bytes.resize(slot_bytes_.size(), 0);
  for (size_t s = 0; s < slot_bytes_.size(); ++s)
    if (buffers.bytes[s] < batch * slot_bytes_[s]) {
      buffers.bytes[s] = batch * slot_bytes_[s];
      buffers.data[s] = cpu::cache_line_bytes(static_cast<size_t>(buffers.bytes[s]));
      // Values no kernel has written read as this byte, the same on every run, not as
      // what the memory held before (possibly right: another engine's freed outputs).
      std::memset(buffers.data[s].get(), kUnwrittenByte, static_cast<size_t>(buffers.bytes[s]));
    }
  std::vector<Int32Tensor> outputs;
  if (end > model_.output())
    for (int o : g.outputs()) outputs.emplace_back(logits_shape(shapes_[o], batch));
  const Images all{0, batch};
  const int shares = first == 0 && !hook ? image_shares(batch, small_network_) : 1;
  if (shares == 1) {
    run_images(input, all, first, end, given, hook, buffers.data, outputs);
  } else {
    std::vector<std::exception_ptr> errors(static_cast<size_t>(shares));
#pragma omp parallel num_threads(shares)
    // Share by share on the threads OpenMP gave (all of them, unless a thread limit says otherwise).
    for (int share = omp_get_thread_num(); share < shares; share += omp_get_num_threads()) {
      const int64_t begin = share * batch / shares, stop = (share + 1) * batch / shares;
      try {
        run_images(input, Images{begin, stop - begin}, first, end, given, hook, buffers.data, outputs);
      } catch (...) {  // an exception must not leave the region
        errors[static_cast<size_t>(share)] = std::current_exception();
      }
    }
    for (const std::exception_ptr& e : errors)
      if (e) std::rethrow_exception(e);
  }
  const std::lock_guard<std::mutex> lock(spare_->mutex);
  if (spare_->data.empty()) {  // keep them for the next run, unless an overlapping run already did
    spare_->data.swap(buffers.data);
    spare_->bytes.swap(buffers.bytes);
  }
  return outputs;
}

void CpuEngine::run_images(const float* input, const Images& images, int first, int end, const Given& given,
                           const Hook& hook, const std::vector<cpu::CacheLineBytes>& buffers,
                           std::vector<Int32Tensor>& outputs) const {
  const Graph& g = model_.graph;
  // Where node i's values of the range's images start: each range has its
  // own part of every buffer, slot_bytes_ per image (the values a buffer
  // holds in turn differ in size, and another range may be at another node).
  const auto at_first_image = [&](int node) -> int8_t* {
    return buffers[slot_[node]].get() + images.first * slot_bytes_[slot_[node]];
  };
  const auto value = [&](int node) -> const int8_t* { return node < first ? given(node) : at_first_image(node); };
  const float* image = input ? input + images.first * shapes_[0].numel() : nullptr;
  for (int i = first; i < end; ++i) {
    const Node& n = g.nodes[i];
    const cpu::NodeView view{model_, shapes_, i};
    const size_t k = pick(i);
    cpu::KernelArgs args{view, images.count, {}, image, nullptr, nullptr, (*kernels_)[i].data[k].get(),
                         bound_[i][k].get()};
    for (int in : n.inputs) args.inputs.push_back(value(in));
    if (g.is_output(i)) {  // logits_shape: image after image
      args.logits = outputs[static_cast<size_t>(i - g.first_output())].ptr() + images.first * shapes_[i].numel();
      (*kernels_)[i].kernels[k]->run(args);
      continue;
    }
    args.y = at_first_image(i);
    (*kernels_)[i].kernels[k]->run(args);
    if (hook && float_outputs_[i]) {
      const float* x = reinterpret_cast<const float*>(args.y);
      std::vector<int8_t> rounded(static_cast<size_t>(images.count * shapes_[i].numel()));
      const NodeQuant& q = model_.quant[i];
      for (size_t v = 0; v < rounded.size(); ++v) rounded[v] = quantize_input(x[v], q.scale, q.zero_point);
      hook(i, rounded.data(), static_cast<int64_t>(rounded.size()));
    } else if (hook) {
      hook(i, args.y, images.count * shapes_[i].numel());
    }
  }
}

int CpuEngine::resume_point(int node) const { return resume_points_.at(node); }

const char* CpuEngine::kernel_name(int node) const { return (*kernels_)[node].kernels[pick(node)]->name; }

std::vector<double> CpuEngine::time_runs(const float* input, int64_t batch, int warmup, int iterations) {
  for (int i = 0; i < warmup; ++i) run(input, batch);
  std::vector<double> ms;
  for (int i = 0; i < iterations; ++i) {
    const auto start = std::chrono::steady_clock::now();
    run(input, batch);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return ms;
}

std::vector<Engine::NodeTiming> CpuEngine::profile(const float* input, int64_t batch, int warmup, int iterations) {
  check(iterations > 0 && warmup >= 0, "cpu profile: iterations must be positive and warm-up runs non-negative");
  const Graph& g = model_.graph;
  const size_t nodes = g.nodes.size();
  std::vector<std::vector<double>> ms(nodes);
  for (int it = 0; it < warmup + iterations; ++it) {
    std::vector<double> finished(nodes, 0);
    const auto start = std::chrono::steady_clock::now();
    const auto since_start = [&] {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    };
    run(input, batch, [&](int node, const int8_t*, int64_t) { finished[node] = since_start(); });
    for (int o : g.outputs()) finished[o] = since_start();  // the hook sees no output: all their time is the first's
    if (it < warmup) continue;
    double previous = 0;
    for (size_t i = 0; i < nodes; ++i) {
      ms[i].push_back(finished[i] - previous);
      previous = finished[i];
    }
  }
  std::vector<NodeTiming> out;
  for (size_t i = 0; i < nodes; ++i) {
    const int node = static_cast<int>(i);
    std::vector<double>& times = ms[i];
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    out.push_back({g.nodes[i].name, op_name(g.nodes[i].op), kernel_name(node),
                   double(batch) * op_macs(g.nodes[i], shapes_, node), times[times.size() / 2]});
  }
  return out;
}

}  // namespace octet
