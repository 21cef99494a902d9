// PRelu's int8 form and file: each channel's table is the leaky ReLU table of
// its slope (graph/ops/prelu.h); the slopes survive a quantized model's file,
// and a file whose slopes do not fit the channels, or are not finite, is
// refused naming the node.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "common/error.h"
#include "common/file_io.h"
#include "common/safetensors.h"
#include "graph/ops/activation.h"
#include "graph/ops/prelu.h"
#include "tests/support/test_util.h"
#include "tests/ops/op_model.h"

namespace octet {
namespace {

TEST(PRelu, EachChannelsTableIsTheLeakyReluOfItsSlope) {
  const FloatTensor slope({3}, std::vector<float>{-0.25f, 0.1f, 1.5f});
  const std::vector<int8_t> tables = ops::prelu_tables(slope, 10.0f, 7.0f, -5, 3);
  ASSERT_EQ(tables.size(), 3u * 256);
  Node leaky;
  leaky.op = Op::Activation;
  leaky.function = "leaky_relu";
  for (int c = 0; c < 3; ++c) {
    leaky.alpha = slope.data[c];
    const auto expected = ops::activation_table(leaky, 10.0f, 7.0f, -5, 3);
    for (int q = 0; q < 256; ++q) EXPECT_EQ(tables[c * 256 + q], expected[q]) << "channel " << c << " level " << q;
  }
  // Input level -105 (-10 units): -0.25 x -10 x 7 = 17.5 -> 18, plus the zero point 3.
  EXPECT_EQ(tables[0 * 256 + (-105 + 128)], 21);
  EXPECT_EQ(tables[2 * 256 + (-105 + 128)], -102);  // 1.5 x -10 x 7 = -105, + 3
  EXPECT_EQ(tables[1 * 256 + (15 + 128)], 17);      // 2 units: 14, + 3, whatever the slope
}

QuantizedModel prelu_model() {
  OpModel m(7);
  m.prelu(m.rescaled(m.input(6, 4, 4), 10.0f), 8.0f);
  return m.finish();
}

TEST(PRelu, FileKeepsTheSlopesAndRefusesWrongOnes) {
  const TempDir temp;
  const std::string path = temp.path() + "/prelu.octet";
  const QuantizedModel model = prelu_model();
  const int node = model.graph.find("prelu_2");
  ASSERT_GE(node, 0);
  save_quantized_model(model, path);
  EXPECT_EQ(load_quantized_model(path).quant[node].slope.data, model.quant[node].slope.data);
  EXPECT_EQ(TensorFile::load(path).get<float>("prelu_2.slope").shape, (Shape{6}));

  QuantizedModel short_of_one = model;
  short_of_one.quant[node].slope = FloatTensor({5}, 0.25f);
  const std::string bad = temp.path() + "/bad.octet";
  EXPECT_THROW(save_quantized_model(short_of_one, bad), Error);
  QuantizedModel not_finite = model;
  not_finite.quant[node].slope.data[3] = std::numeric_limits<float>::quiet_NaN();
  try {
    not_finite.validate();
    FAIL() << "a NaN slope was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'prelu_2'.slope holds a NaN"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(file_exists(bad));
}

}  // namespace
}  // namespace octet
