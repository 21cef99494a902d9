// libFuzzer target: a float checkpoint as `octet quantize`, `eval` and `hist`
// read it: load_checkpoint (format, metadata, graph JSON, parameter shapes),
// then batch-norm folding into the inference graph.
#include <cstdint>

#include "graph/fold.h"
#include "models/checkpoint.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = octet::fuzz::write_scratch(data, size, ".octet");
  octet::fuzz::expect_clean([&] {
    const octet::Checkpoint checkpoint = octet::load_checkpoint(path);
    octet::fold_for_inference(checkpoint.graph, checkpoint.params);
  });
  return 0;
}
