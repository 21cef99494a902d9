#include "bench/output_runs.h"

#include <utility>

#include "bench/timing.h"
#include "common/error.h"
#include "graph/output_view.h"
#include "qmodel/output_floats.h"

namespace octet {

std::vector<double> time_runs_with_outputs(const Engine& engine, const float* images, int64_t batch, int warmup,
                                           int iterations) {
  const QuantizedModel& model = engine.model();
  const std::vector<ActShape> shapes = model.graph.shapes();
  std::vector<std::vector<OutputRun>> arrangements;  // per model output
  for (const ModelOutput& m : model_outputs(model.graph, shapes))
    arrangements.push_back(output_runs(model.graph, shapes, m));
  size_t arranged = 0;  // read after the runs, so that none of their work is optimised away
  std::vector<double> ms = time_calls(warmup, iterations, [&] {
    std::vector<std::vector<int32_t>> logits;
    for (Int32Tensor& t : engine.run_outputs(images, batch)) logits.push_back(std::move(t.data));
    const std::vector<std::vector<float>> values = output_floats(model, shapes, logits, batch);
    for (const std::vector<OutputRun>& r : arrangements) arranged += arrange_output(r, values, batch).size();
  });
  check(arranged > 0, "octet bench infer: the model's outputs arranged no values");
  return ms;
}

}  // namespace octet
