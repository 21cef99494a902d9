// Numbers in files are range-checked before any cast or product that could
// overflow (undefined behaviour, which the fuzz targets under UBSan look for):
// each case below is refused with a message instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

#include "common/safetensors.h"
#include "data/dataset.h"
#include "graph/graph.h"
#include "models/checkpoint.h"
#include "tests/support/random_model.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

std::string graph_error(const std::string& json) {
  return error_of([&] { Graph::from_json(json); });
}

TEST(FileRanges, GraphAttributesOutsideIntAndHugeActivationsAreRefused) {
  EXPECT_NE(graph_error(R"([{"name":"input","op":"input","inputs":[],"channels":1e300,"height":2,"width":2}])")
                .find("graph node 0: attribute 'channels' is 1e+300, not an integer in int range"),
            std::string::npos);
  EXPECT_NE(graph_error(R"([{"name":"input","op":"input","inputs":[],"channels":3,"height":2147483648,"width":2}])")
                .find("attribute 'height' is 2147483648, not an integer in int range"),
            std::string::npos);
  EXPECT_NE(graph_error(R"([{"name":"input","op":"input","inputs":[],"channels":65536,"height":65536,"width":65536}])")
                .find("bad input shape"),
            std::string::npos);
  EXPECT_NE(graph_error(R"([{"name":"input","op":"input","inputs":[],"channels":1,"height":4,"width":4},
                            {"name":"c","op":"conv2d","inputs":[0],"channels":2147483647,"kernel":1,"padding":1000}])")
                .find("output has more than 2^31 - 1 values"),
            std::string::npos);
  const std::string image = R"([{"name":"input","op":"input","inputs":[],"channels":1,"height":4,"width":4},)";
  EXPECT_NE(graph_error(image + R"({"name":"p","op":"pad2d","inputs":[0],"pads":[0,2147483647,0,2147483647]}])")
                .find("output has more than 2^31 - 1 values"),
            std::string::npos);
  EXPECT_NE(graph_error(image + R"({"name":"p","op":"pad2d","inputs":[0],"pads":[0,1,0]}])")
                .find("graph node 1: pads is not [top, left, bottom, right]"),
            std::string::npos);
  // Negative pads crop: at least a row and a column stay, and no side removes more than the input.
  for (const char* pads : {"[0,1,-4,0]", "[-5,0,2,0]", "[0,-2147483648,0,2147483647]"})
    EXPECT_NE(graph_error(image + R"({"name":"p","op":"pad2d","inputs":[0],"pads":)" + pads + "}]")
                  .find("leave nothing of the input 1x4x4"),
              std::string::npos)
        << pads;
  EXPECT_NE(graph_error(image + R"({"name":"n","op":"layer_norm","inputs":[0],"epsilon":-1e-5}])").find("epsilon"),
            std::string::npos);
  EXPECT_NE(graph_error(image + R"({"name":"n","op":"layer_norm","inputs":[0],"epsilon":1e39}])").find("epsilon"),
            std::string::npos);
  EXPECT_NE(graph_error(R"([{"name":"input","op":"input","inputs":[1.5],"channels":1,"height":4,"width":4}])")
                .find("input 1.5 is not an earlier node"),
            std::string::npos);
}

TEST(FileRanges, UpsampleFactorsOutsideOneTo64AndHugeOutputsAreRefused) {
  const std::string image = R"([{"name":"input","op":"input","inputs":[],"channels":1,"height":4,"width":4},)";
  for (const char* factors : {R"("stride":0)", R"("stride":65)", R"("stride":2,"stride_w":-1)", R"("stride_w":100)"})
    EXPECT_NE(graph_error(image + R"({"name":"u","op":"upsample","inputs":[0],)" + factors + "}]")
                  .find("outside 1 to 64"),
              std::string::npos)
        << factors;
  EXPECT_NE(graph_error(R"([{"name":"input","op":"input","inputs":[],"channels":1,"height":8192,"width":8192},
                            {"name":"u","op":"upsample","inputs":[0],"stride":64}])")
                .find("output has more than 2^31 - 1 values"),
            std::string::npos);
}

// With corners aligned, 50 pixels to 3000 weigh in 2999ths each way: sums beyond requantize_by_division's 2^22.
TEST(FileRanges, BilinearUpsamplingWhoseWeightsSumBeyondTheExactDivisionIsRefused) {
  const std::string image = R"([{"name":"input","op":"input","inputs":[],"channels":1,"height":50,"width":50},)";
  EXPECT_NE(graph_error(image +
                        R"({"name":"u","op":"upsample_bilinear","inputs":[0],"stride":60,"align_corners":true}])")
                .find("weights sum to 8994001 units"),
            std::string::npos);
  EXPECT_EQ(graph_error(image + R"({"name":"u","op":"upsample_bilinear","inputs":[0],"stride":60}])"), "no error");
  EXPECT_NE(graph_error(image + R"({"name":"u","op":"upsample_bilinear","inputs":[0],"stride":65}])")
                .find("outside 1 to 64"),
            std::string::npos);
  // Sizes: both sides from 1 to 65536, without factors; 50 -> 3000 x 7 with centres aligned weighs in 120ths x 14ths.
  EXPECT_EQ(graph_error(image + R"({"name":"u","op":"upsample_bilinear","inputs":[0],"height":3000,"width":7}])"),
            "no error");
  for (const char* size : {R"("height":0,"width":7)", R"("height":7)", R"("height":70000,"width":7)"})
    EXPECT_NE(graph_error(image + R"({"name":"u","op":"upsample_bilinear","inputs":[0],)" + size + "}]")
                  .find("is outside 1 to 65536"),
              std::string::npos)
        << size;
  EXPECT_NE(graph_error(image + R"({"name":"u","op":"upsample_bilinear","inputs":[0],"height":7,"width":7,)"
                                R"("stride":2}])")
                .find("a size and factors both"),
            std::string::npos);
  EXPECT_NE(graph_error(R"([{"name":"input","op":"input","inputs":[],"channels":1,"height":70000,"width":2},
                            {"name":"u","op":"upsample_bilinear","inputs":[0],"height":5,"width":3}])")
                .find("an input of 1x70000x2: resized to a size, its sides are at most 65536"),
            std::string::npos);
  EXPECT_NE(graph_error(image + R"({"name":"u","op":"upsample_bilinear","inputs":[0],"height":4001,"width":3001,)"
                                R"("align_corners":true}])")
                .find("weights sum to"),
            std::string::npos);
}

TEST(FileRanges, ConvDilationsBelowOneOutsideIntOrWiderThanThePaddedImageAreRefused) {
  const auto conv = [](const std::string& attributes) {
    return graph_error(R"([{"name":"input","op":"input","inputs":[],"channels":1,"height":4,"width":4},
                           {"name":"c","op":"conv2d","inputs":[0],"channels":2,"kernel":3,)" +
                       attributes + "}]");
  };
  EXPECT_NE(conv(R"("padding":1,"dilation":0)").find("node 1 'c'"), std::string::npos);
  EXPECT_NE(conv(R"("padding":1,"dilation":0)").find("dilation 0 is below 1"), std::string::npos);
  EXPECT_NE(conv(R"("padding":1,"dilation":-2)").find("dilation -2 is below 1"), std::string::npos);
  EXPECT_NE(conv(R"("dilation":2147483648)").find("attribute 'dilation' is 2147483648, not an integer in int range"),
            std::string::npos);
  // (3 - 1) x 2^30 + 1 taps: 64-bit arithmetic, refused rather than wrapped.
  EXPECT_NE(conv(R"("padding":1,"dilation":1073741824)")
                .find("dilated kernel (2147483649 pixels) larger than the padded input 1x4x4"),
            std::string::npos);
  EXPECT_NE(conv(R"("padding":1,"dilation":3)").find("dilated kernel (7 pixels) larger than the padded input 1x4x4"),
            std::string::npos);
  EXPECT_EQ(conv(R"("padding":1,"dilation":2)"), "no error");  // 5 pixels fit 4 + 2 x 1
}

// A kernel one pixel wider than the padded image at stride 2: no window fits
// (the shape rule's division, rounding toward zero, counted one).
TEST(FileRanges, AConvKernelWiderThanThePaddedImageIsRefusedAtAnyStride) {
  for (const char* stride : {"1", "2", "3"})
    EXPECT_NE(graph_error(R"([{"name":"input","op":"input","inputs":[],"channels":1,"height":4,"width":4},
                              {"name":"c","op":"conv2d","inputs":[0],"channels":2,"kernel":5,"stride":)" +
                          std::string(stride) + "}]")
                  .find("kernel larger than the padded input 1x4x4"),
              std::string::npos)
        << "stride " << stride;
}

// A 1x7 kernel keeps its width through the graph's JSON; one wider than the
// padded image and a negative width are refused; a grouped one is taken.
TEST(FileRanges, ANonSquareKernelRoundTripsAndBadWidthsAreRefused) {
  const Graph g = random_rectangular_checkpoint(1).graph;
  const Graph back = Graph::from_json(g.to_json());
  ASSERT_EQ(back.nodes.size(), g.nodes.size());
  int rectangular = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    EXPECT_EQ(kernel_width(back.nodes[i]), kernel_width(g.nodes[i])) << g.nodes[i].name;
    rectangular += rectangular_kernel(back.nodes[i]);
  }
  EXPECT_EQ(rectangular, 3);  // 1x7, 7x1 and 3x5
  EXPECT_EQ(back.shapes(), g.shapes());
  const std::string image = R"([{"name":"input","op":"input","inputs":[],"channels":4,"height":4,"width":4},)";
  EXPECT_NE(graph_error(image + R"({"name":"c","op":"conv2d","inputs":[0],"channels":2,"kernel":1,"kernel_w":7}])")
                .find("kernel larger than the padded input 4x4x4"),
            std::string::npos);
  EXPECT_NE(graph_error(image + R"({"name":"c","op":"conv2d","inputs":[0],"channels":2,"kernel":1,"kernel_w":-3}])")
                .find("bad conv attributes"),
            std::string::npos);
  // Depthwise 1x3 (a depthwise Conv1d's kind), padded by 1: 6 rows of 4 pixels.
  const Graph depthwise = Graph::from_json(image + R"({"name":"c","op":"conv2d","inputs":[0],"channels":4,)" +
                                           R"("kernel":1,"kernel_w":3,"groups":4,"padding":1}])");
  EXPECT_EQ(depthwise.shapes().back(), (ActShape{4, 6, 4}));
}

TEST(FileRanges, SafetensorsShapesWhoseElementCountOverflowsAreRefused) {
  const std::string header = R"({"t":{"dtype":"F32","shape":[4611686018427387904,4,0],"data_offsets":[0,0]}})";
  // The 8-byte little-endian header length, then the header. (Not
  // vector::insert: GCC 12 warns falsely about its copy, -Warray-bounds.)
  std::vector<uint8_t> bytes(8 + header.size(), 0);
  bytes[0] = static_cast<uint8_t>(header.size());
  std::copy(header.begin(), header.end(), bytes.begin() + 8);
  EXPECT_NE(error_of([&] { TensorFile::parse(bytes, "f"); }).find("tensor 't': shape [4611686018427387904,4,0] has too many elements"),
            std::string::npos);
}

TEST(FileRanges, IdxDimensionsBeyondTheDataAreRefused) {
  TempDir dir;
  const std::string path = dir.path("images-idx3-ubyte");
  // Three dimensions of 2^31 - 1: their product wraps 64 bits' worth of bytes.
  const uint8_t header[] = {0, 0, 8, 3, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 1, 2};
  std::FILE* f = std::fopen(path.c_str(), "wb");
  std::fwrite(header, 1, sizeof(header), f);
  std::fclose(f);
  std::vector<int> dims;
  EXPECT_NE(error_of([&] { read_idx_file(path, &dims); }).find("its header announces more data than the file's 2 bytes"),
            std::string::npos);
}

TEST(FileRanges, MetadataFloatsBeyondFloatAreRefused) {
  Checkpoint c = random_checkpoint("lenet5", ModelOptions{1, 28, 28, 10, true}, 3);
  TempDir dir;
  save_checkpoint(c, dir.path("c.octet"));
  TensorFile file = TensorFile::load(dir.path("c.octet"));
  file.metadata["mean"] = "[1e300]";
  file.save(dir.path("bad.octet"));
  EXPECT_NE(error_of([&] { load_checkpoint(dir.path("bad.octet")); }).find("metadata 'mean' value is 1e+300, outside the float range"),
            std::string::npos);
}

}  // namespace
}  // namespace octet
