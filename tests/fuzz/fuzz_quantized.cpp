// libFuzzer target: a quantized model as `octet eval`, `predict` and `bench`
// read it: load_quantized_model (format, metadata, graph, every tensor and
// the validation of its ranges), then the CPU engine packing its weights and
// running one image, where an accepted file must not overflow int32 (signed
// overflow is undefined behaviour, which UBSan reports).
#include <omp.h>

#include <cstdint>
#include <vector>

#include "qmodel/quantized_model.h"
#include "runtime/cpu/cpu_engine.h"
#include "tests/fuzz/fuzz_input.h"

namespace {
// Inputs whose activations exceed this run only through loading: a mutated
// image size must not turn one execution into seconds of convolution.
constexpr int64_t kMaxRunValues = int64_t{1} << 16;

bool small_enough_to_run(const octet::QuantizedModel& model) {
  for (const octet::ActShape& s : model.graph.shapes())
    if (s.numel() > kMaxRunValues) return false;
  for (const octet::NodeQuant& q : model.quant)
    if (q.weight.numel() > kMaxRunValues) return false;
  return true;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  omp_set_num_threads(1);
  const std::string& path = octet::fuzz::write_scratch(data, size, ".int8.octet");
  octet::fuzz::expect_clean([&] {
    const octet::QuantizedModel model = octet::load_quantized_model(path);
    if (!small_enough_to_run(model)) return;
    const octet::CpuEngine engine(model);
    const octet::ActShape in = model.graph.shapes()[0];
    // Saturating inputs (+-127 after quantization) drive the accumulators to their bound.
    std::vector<float> image(static_cast<size_t>(in.numel()), 1e6f);
    for (size_t i = 0; i < image.size(); i += 2) image[i] = -1e6f;
    engine.run(image.data(), 1);
  });
  return 0;
}
