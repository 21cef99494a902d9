// The CUDA runtime's memory plan, checked on the host without nvcc or a GPU.
// (The device layout's values themselves are compared with the reference for
// every operator by test_backend_ops' host-layout backends.)
#include <gtest/gtest.h>

#include <string>

#include "runtime/cuda/device_layout.h"
#include "runtime/cuda/implicit_gemm.h"
#include "runtime/cuda/stream_schedule.h"
#include "tests/support/random_model.h"

namespace octet {
namespace {

// Values alive at the same time never share bytes; every buffer is aligned;
// reuse makes ResNet-20's arena over 3 times smaller than one buffer each
// (about 3 stage-1 activations are alive at once, out of 20 values).
TEST(CudaDeviceLayout, ArenaSeparatesLiveValuesAndReusesDeadOnes) {
  const QuantizedModel model =
      quantize_random(random_checkpoint("resnet20", ModelOptions{}, 23), quick_quantize_options(), 8);
  const Graph& g = model.graph;
  const cuda::ValueLayout layout = cuda::plan_values(g, g.shapes(), "test", cuda::kDp4aChannelAlignment);
  const int64_t batch = 5;
  const cuda::ArenaPlan reuse = cuda::plan_arena(g, layout, batch, false, {});
  const cuda::ArenaPlan separate = cuda::plan_arena(g, layout, batch, true, {});
  for (int u = 0; u < model.output(); ++u) {
    if (layout.owner[u] != u) continue;
    EXPECT_EQ(reuse.offset[u] % cuda::kBufferAlignment, 0);
    for (int reader = u + 1; reader <= model.output(); ++reader)
      for (int in : g.nodes[reader].inputs) {
        if (layout.owner[in] == u) {
          EXPECT_GE(reuse.last_use[u], reader) << g.nodes[u].name;
        }
      }
    for (int v = u + 1; v < model.output(); ++v) {
      if (layout.owner[v] != v || v > reuse.last_use[u]) continue;  // v is written after u's last reader
      const int64_t u_end = reuse.offset[u] + batch * layout.storage[u].bytes();
      const int64_t v_end = reuse.offset[v] + batch * layout.storage[v].bytes();
      EXPECT_TRUE(u_end <= reuse.offset[v] || v_end <= reuse.offset[u])
          << g.nodes[u].name << " and " << g.nodes[v].name << " overlap while both are alive";
    }
  }
  EXPECT_LT(reuse.bytes * 3, separate.bytes);
}

// The CUDA kernels of concat, mul, channel slice and activations index their
// inputs by pixel and channel: a flattened value (stored as its image's
// padded pixels) is refused, naming the node, instead of read wrongly.
TEST(CudaDeviceLayout, PixelKernelsRefuseFlattenedInputs) {
  for (const std::string op : {"activation", "concat", "mul", "channel_slice"}) {
    GraphBuilder b;
    const int x = b.input(3, 4, 4);
    const int flat = b.flatten(b.conv("c", x, 5, 3, 1, 1, true));
    const int y = op == "activation" ? b.activation(flat, "sigmoid")
                  : op == "concat"   ? b.concat({flat, flat})
                  : op == "mul"      ? b.mul(flat, flat)
                                     : b.channel_slice(flat, 0, 2);
    b.linear("fc", y, 2);
    const Graph g = b.finish();
    try {
      cuda::plan_values(g, g.shapes(), "test", cuda::kDp4aChannelAlignment);
      ADD_FAILURE() << op << " of a flattened value was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("node '" + g.nodes[y].name + "'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("reads a flattened value as an image"), std::string::npos) << e.what();
    }
  }
}


// cuda-imma folds an image of up to 4 channels (folded_input.h) only where
// every reader is a dense conv: 2 x 2 for stride-2 readers, into patches for
// stride-1 readers of one window; strip_padding unfolds either.
TEST(CudaDeviceLayout, FoldsAnImageOnlyForItsConvs) {
  using cuda::ImageFold;
  const auto input_fold = [](int channels, int stride, int groups, bool pooled_too, int alignment, int kernel = 3) {
    GraphBuilder b;
    const int x = b.input(channels, 7, 9);
    int y = b.conv("c", x, 6, kernel, stride, 1, true, groups);
    if (pooled_too) y = b.add(y, b.conv("d", b.max_pool(x, 3, stride, 1), 6, 1, 1, 0, true));
    b.linear("fc", b.flatten(y), 2);
    const Graph g = b.finish();
    return cuda::plan_values(g, g.shapes(), "test", alignment).storage[x].fold.kind;
  };
  const int imma = cuda::igemm::kChannelAlignment;
  EXPECT_EQ(input_fold(3, 2, 1, false, imma), ImageFold::kSpaceToDepth);
  EXPECT_EQ(input_fold(4, 2, 1, false, imma), ImageFold::kSpaceToDepth);
  EXPECT_EQ(input_fold(3, 1, 1, false, imma), ImageFold::kPatches);
  EXPECT_EQ(input_fold(3, 1, 1, false, imma, 5), ImageFold::kNone);  // 100 bytes a window
  EXPECT_EQ(input_fold(5, 2, 1, false, imma), ImageFold::kNone);
  EXPECT_EQ(input_fold(3, 2, 3, false, imma), ImageFold::kNone);  // grouped: not an implicit GEMM
  EXPECT_EQ(input_fold(3, 2, 1, true, imma), ImageFold::kNone);   // a pool reads it too
  EXPECT_EQ(input_fold(3, 1, 1, true, imma), ImageFold::kNone);
  EXPECT_EQ(input_fold(3, 2, 1, false, cuda::kDp4aChannelAlignment), ImageFold::kNone);

  for (const ImageFold::Kind kind : {ImageFold::kSpaceToDepth, ImageFold::kPatches}) {
    cuda::Storage s;
    s.fold.kind = kind, s.fold.height = 3, s.fold.width = 5, s.fold.channels = 2;
    if (kind == ImageFold::kPatches) s.fold.kernel = 3, s.fold.padding = 1;
    s.pixels = int64_t(s.fold.stored_h()) * s.fold.stored_w(), s.c = 2, s.padded_c = s.fold.stored_c();
    std::vector<int8_t> stored(static_cast<size_t>(2 * s.bytes()), int8_t{0x5A});
    std::vector<int8_t> want;
    for (int n = 0; n < 2; ++n)
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 5; ++x)
          for (int c = 0; c < 2; ++c) {
            want.push_back(static_cast<int8_t>(want.size()));
            stored[n * s.bytes() + s.fold.offset_of(y, x, c)] = want.back();
          }
    EXPECT_EQ(cuda::strip_padding(stored, s, 2, 0), want);
  }
}

// An unsigned tensor is stored centered (runtime/cuda/stored_value.h): uint8
// bytes q + 128, which strip_padding gives back as the CPU's q.
// A conv's or linear's one reader, a table activation, is fused into it
// (its epilogue writes the activation's value): not where the conv has other
// readers or a wide value. The activation's buffer then lives from the conv
// on, apart from every value alive there (the conv's input among them), and
// the conv's own has no buffer, except with every value retained.
TEST(CudaDeviceLayout, FusedActivationsAreWrittenByTheirLayers) {
  QuantizedModel model = quantize_random(random_imagenet_ops_checkpoint(31), quick_quantize_options(), 8);
  const Graph& g = model.graph;
  const std::vector<std::vector<int>> consumers = g.consumers();
  const auto fusable = [&](int i) {
    const Op op = g.nodes[i].op;
    return (op == Op::Conv2d || op == Op::Linear) && i < g.output() && consumers[i].size() == 1 &&
           g.nodes[consumers[i][0]].op == Op::Activation;
  };
  const cuda::ValueLayout layout = cuda::plan_model_values(model, g.shapes(), "test", cuda::igemm::kChannelAlignment);
  std::vector<int> first_write(g.nodes.size());
  int fused = 0;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    first_write[i] = i;
    EXPECT_EQ(layout.fused_activation[i], fusable(i) ? consumers[i][0] : -1) << g.nodes[i].name;
  }
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i)
    if (layout.fused_activation[i] >= 0) first_write[layout.fused_activation[i]] = i, ++fused;
  EXPECT_EQ(fused, 4) << "dw, se_expand, branch and right";

  const int64_t batch = 3;
  const cuda::ArenaPlan reuse = cuda::plan_arena(g, layout, batch, false, {});
  const cuda::ArenaPlan separate = cuda::plan_arena(g, layout, batch, true, {});
  for (int u = 0; u < g.output(); ++u) {
    if (layout.owner[u] != u) continue;
    EXPECT_GE(separate.offset[u], 0) << g.nodes[u].name;
    if (layout.fused_activation[u] >= 0) {
      EXPECT_EQ(reuse.offset[u], -1) << g.nodes[u].name << "'s value is never stored";
      continue;
    }
    for (int v = 0; v < g.output(); ++v) {
      if (v == u || layout.owner[v] != v || layout.fused_activation[v] >= 0) continue;
      if (first_write[v] > reuse.last_use[u] || first_write[u] > reuse.last_use[v]) continue;  // never alive together
      const int64_t u_end = reuse.offset[u] + batch * layout.storage[u].bytes();
      const int64_t v_end = reuse.offset[v] + batch * layout.storage[v].bytes();
      EXPECT_TRUE(u_end <= reuse.offset[v] || v_end <= reuse.offset[u])
          << g.nodes[u].name << " and " << g.nodes[v].name << " overlap while both are alive";
    }
  }

  // A wide conv output is not fused.
  for (int i = 0; i < g.output(); ++i)
    if (layout.fused_activation[i] >= 0) model.quant[i].bits = 16;
  const cuda::ValueLayout wide = cuda::plan_model_values(model, g.shapes(), "test", cuda::igemm::kChannelAlignment);
  for (int i = 0; i < g.output(); ++i) EXPECT_EQ(wide.fused_activation[i], -1) << g.nodes[i].name;
}

// Which convs run beside the main stream (stream_schedule.h), and a memory
// plan that lets them: while a node runs beside, every node of the main
// stream between its fork and its join may run too, and must write no buffer
// it reads or writes, nor read the one it writes.
std::vector<bool> every_conv(const Graph& g) {
  std::vector<bool> convs(g.nodes.size(), false);
  for (int i = 0; i < g.output(); ++i) convs[i] = g.nodes[i].op == Op::Conv2d;
  return convs;
}

void expect_side_nodes_apart(const Graph& g, const cuda::ValueLayout& layout, const cuda::ArenaPlan& arena,
                             const cuda::StreamSchedule& streams, int64_t batch) {
  // The buffers node i's launch writes and reads, as owners (none for a flatten or the output).
  const auto writes = [&](int i) {
    const bool launches = i < g.output() && layout.owner[i] == i && arena.offset[layout.written_owner(i)] >= 0;
    return launches ? std::vector<int>{layout.written_owner(i)} : std::vector<int>{};
  };
  const auto reads = [&](int i) {
    std::vector<int> owners;
    for (const int in : g.nodes[i].inputs) owners.push_back(layout.owner[in]);
    return owners;
  };
  const auto overlap = [&](int u, int v) {
    const int64_t u_end = arena.offset[u] + batch * layout.storage[u].bytes();
    const int64_t v_end = arena.offset[v] + batch * layout.storage[v].bytes();
    return arena.offset[u] < v_end && arena.offset[v] < u_end;
  };
  for (const int side : streams.side_nodes)
    for (int m = streams.fork[side]; m < streams.join[side]; ++m) {
      if (streams.beside(m)) continue;
      for (const int w : writes(m)) {
        for (const int r : reads(side)) EXPECT_FALSE(overlap(w, r)) << g.nodes[m].name << " overwrites what "
                                                                      << g.nodes[side].name << " reads";
        for (const int r : writes(side)) EXPECT_FALSE(overlap(w, r)) << g.nodes[m].name << " and "
                                                                       << g.nodes[side].name << " write one buffer";
      }
      for (const int r : reads(m))
        for (const int w : writes(side))
          EXPECT_FALSE(overlap(w, r)) << g.nodes[side].name << " overwrites what " << g.nodes[m].name << " reads";
    }
}

// ResNet-18's projection shortcuts (1x1, stride 2) run beside their block's
// first conv, and its second, which adds them, waits for them; ResNet-20's
// shortcuts are no convs, and nothing else there can run beside.
TEST(CudaStreamSchedule, ProjectionShortcutsRunBesideTheirBlocksFirstConv) {
  for (const std::string name : {"resnet18", "resnet20"}) {
    const QuantizedModel model = quantize_random(random_checkpoint(name, ModelOptions{}, 5), quick_quantize_options(), 2);
    const Graph& g = model.graph;
    const cuda::ValueLayout layout = cuda::plan_model_values(model, g.shapes(), "test", cuda::igemm::kChannelAlignment);
    const cuda::StreamSchedule streams = cuda::schedule_streams(g, layout, every_conv(g));
    std::vector<std::string> beside, forks, joins;
    for (const int side : streams.side_nodes) {
      beside.push_back(g.nodes[side].name);
      forks.push_back(g.nodes[streams.fork[side]].name);
      joins.push_back(g.nodes[streams.join[side]].name);
    }
    if (name == "resnet20") {
      EXPECT_TRUE(beside.empty()) << beside.front();
      continue;
    }
    using Names = std::vector<std::string>;
    EXPECT_EQ(beside, (Names{"layer2.0.shortcut.0", "layer3.0.shortcut.0", "layer4.0.shortcut.0"}));
    EXPECT_EQ(forks, (Names{"layer2.0.conv1", "layer3.0.conv1", "layer4.0.conv1"}));
    EXPECT_EQ(joins, (Names{"layer2.0.conv2", "layer3.0.conv2", "layer4.0.conv2"}));
    for (const int64_t batch : {1, 256})
      expect_side_nodes_apart(g, layout, cuda::plan_arena(g, layout, batch, false, streams), streams, batch);
    EXPECT_TRUE(cuda::schedule_streams(g, layout, std::vector<bool>(g.nodes.size(), false)).side_nodes.empty());
  }
}

// Two branches from x: a chain of four convs and a conv beside them. In
// order, the one beside could take the buffer of the chain's second value
// (dead by then), and the chain's fourth the buffer of x (read last by the one
// beside): both are in use while the branches run at once. A conv reading a
// value written beside waits for it instead of running beside itself.
TEST(CudaStreamSchedule, BranchesBesideKeepTheirBuffersApart) {
  GraphBuilder b;
  const int x = b.conv("x", b.input(16, 8, 8), 16, 3, 1, 1, true);
  const int a = b.conv("a", x, 16, 3, 1, 1, true);
  const int c = b.conv("c", b.conv("b", a, 16, 3, 1, 1, true), 16, 3, 1, 1, true);
  const int side = b.conv("side", x, 16, 3, 1, 1, true);
  const int d = b.conv("d", c, 16, 3, 1, 1, true);
  const int after_side = b.conv("after_side", side, 16, 3, 1, 1, true);
  b.linear("fc", b.flatten(b.add(d, after_side)), 2);
  const Graph g = b.finish();
  const cuda::ValueLayout layout = cuda::plan_values(g, g.shapes(), "test", cuda::igemm::kChannelAlignment);
  const cuda::StreamSchedule streams = cuda::schedule_streams(g, layout, every_conv(g));
  ASSERT_EQ(streams.side_nodes, std::vector<int>{side});
  EXPECT_EQ(streams.fork[side], a);
  EXPECT_EQ(streams.join[side], after_side);
  EXPECT_FALSE(streams.beside(after_side));
  const int64_t batch = 2;
  const cuda::ArenaPlan arena = cuda::plan_arena(g, layout, batch, false, streams);
  expect_side_nodes_apart(g, layout, arena, streams, batch);
  EXPECT_GE(arena.last_use[x], after_side - 1);
  EXPECT_THROW(cuda::plan_arena(g, layout, batch, true, streams), Error);
}

TEST(CudaDeviceLayout, StripPaddingAddsTheZeroPointBack) {
  cuda::Storage s;
  s.pixels = 2, s.c = 3, s.padded_c = 4;
  const std::vector<int8_t> stored = {0, int8_t(200), int8_t(255), 0, 1, 127, int8_t(128), 0};
  EXPECT_EQ(cuda::strip_padding(stored, s, 1, -128), (std::vector<int8_t>{-128, 72, 127, -127, -1, 0}));
  EXPECT_EQ(cuda::strip_padding(stored, s, 1, 0), (std::vector<int8_t>{0, -56, -1, 1, 127, -128}));
}

}  // namespace
}  // namespace octet
