// ONNX's own operator tests through octet's ONNX importer and float executor:
// the backend node tests of Debian's libonnx-testdata (data/node/test_*/: a
// model.onnx of one node, or of a few for the *_expanded tests, and
// test_data_set_0/{input_K.pb, output_0.pb}). Each test's inputs after the
// first become constants (initializers with the test's values), the model is
// imported (import_onnx_model), written and read back as a checkpoint, run by
// the float executor on input_0 and compared with output_0 at the tolerance of
// ONNX's backend tests (|octet - onnx| <= 1e-7 + 1e-3 |onnx|).
//
// Each node test is PASS, REFUSED (the importer's message: octet's graph is
// N x C x H x W per image, so 1-D and 3-D tests are refused, as are operators
// and attributes it does not import) or FAILURE (imported, then wrong numbers,
// or no run). Every node test of the folder runs, so an operator the importer
// learns is picked up here without a change: the table lists the tests of the
// operators octet imports or is being taught (kOperators) and any other test
// that imports; the other tests are counted on a line of their own. The test
// fails on any FAILURE and when fewer of kOperators' tests pass than
// kMinimumPasses (measured); run alone it prints the table:
//
//   build-core/tests/test_onnx_node_suite
//
// OCTET_ONNX_NODE_TESTS names another folder of node tests (a newer ONNX's).
// libonnx-testdata 1.12 has no dilated Conv: one of its conv tests is
// rewritten with dilations and checked against a convolution done here.
#include <gtest/gtest.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "common/error.h"
#include "common/file_io.h"
#include "graph/float_executor.h"
#include "interop/onnx_import.h"
#include "tests/support/test_util.h"

namespace octet {
namespace {

constexpr const char* kDefaultNodeTests = "/usr/share/libonnx-testdata/data/node";
constexpr double kRtol = 1e-3, kAtol = 1e-7;      // onnx/backend/test/case/node: the node tests' tolerance
constexpr int64_t kImporterOpsets[2] = {11, 27};  // interop/onnx_import.cpp's kMinOpset, kMaxOpset

// The node tests (by name prefix) of the operators octet imports or is being
// taught (issue 40); test_matmul_2d alone of MatMul's (the others are not 2-D).
const std::vector<std::string> kOperators = {
    "test_conv",        "test_basic_conv", "test_maxpool",   "test_averagepool", "test_globalaveragepool",
    "test_concat",      "test_relu",       "test_clip",      "test_leakyrelu",   "test_sigmoid",
    "test_hardsigmoid", "test_hardswish",  "test_gemm",      "test_add",         "test_mul",
    "test_flatten",     "test_reshape",    "test_transpose", "test_softmax",     "test_batchnorm",
    "test_sub",         "test_prelu",      "test_tanh",      "test_elu",         "test_softplus",
    "test_mish",        "test_squeeze",    "test_gather",    "test_lrn",         "test_globalmaxpool",
    "test_instancenorm"};
const std::vector<std::string> kOperatorTests = {"test_matmul_2d"};

// Measured with libonnx-testdata 1.12.0 and the importer of this commit; a
// pass lost fails the test (raise it when the importer learns more).
// 58: 52, and 2 each of LRN, GlobalMaxPool and InstanceNormalization; 63 since models returning an image
// import (tests of 3-D values, a softmax over their channels).
constexpr int kMinimumPasses = 63;

enum class Result { Pass, Refused, Failure };
const char* result_name(Result r) { return r == Result::Pass ? "PASS" : r == Result::Refused ? "REFUSED" : "FAILURE"; }

struct Outcome {
  Result result;
  std::string reason;  // the importer's refusal, or what went wrong
  std::string note;    // how the test was read (move_opset)
};

onnx::TensorProto read_tensor(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path);
  onnx::TensorProto t;
  check(t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())), path + " is not a TensorProto");
  return t;
}

// A FLOAT or DOUBLE tensor's values (raw_data or the typed field); fails for other types.
std::vector<double> tensor_values(const onnx::TensorProto& t) {
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d;
  std::vector<double> out;
  if (t.data_type() == onnx::TensorProto::FLOAT) {
    std::vector<float> v(t.float_data().begin(), t.float_data().end());
    if (t.has_raw_data()) {
      check(t.raw_data().size() == static_cast<size_t>(count) * sizeof(float), "raw data of the wrong size");
      v.resize(static_cast<size_t>(count));
      std::memcpy(v.data(), t.raw_data().data(), t.raw_data().size());
    }
    out.assign(v.begin(), v.end());
  } else if (t.data_type() == onnx::TensorProto::DOUBLE) {
    out.assign(t.double_data().begin(), t.double_data().end());
    if (t.has_raw_data()) {
      check(t.raw_data().size() == static_cast<size_t>(count) * sizeof(double), "raw data of the wrong size");
      out.resize(static_cast<size_t>(count));
      std::memcpy(out.data(), t.raw_data().data(), t.raw_data().size());
    }
  } else {
    fail("a tensor of ONNX type " + std::to_string(t.data_type()) + ", not float");
  }
  check(static_cast<int64_t>(out.size()) == count,
        "a tensor holding " + std::to_string(out.size()) + " values for " + std::to_string(count));
  return out;
}

std::string dims_string(const onnx::TensorProto& t) {
  std::string s = "[";
  for (int k = 0; k < t.dims_size(); ++k) s += (k ? "," : "") + std::to_string(t.dims(k));
  return s + "]";
}

// ONNX versions operators, not models: a node test written at an opset
// outside the importer's whose every operator has the same definition at the
// nearest opset it reads (ONNX's schema registry) is the same model there, and
// is read there; "" when it is not moved, else a note saying so.
std::string move_opset(onnx::ModelProto& model) {
  onnx::OperatorSetIdProto* onnx_opset = nullptr;
  for (auto& o : *model.mutable_opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") onnx_opset = &o;
  if (!onnx_opset) return "";
  const int64_t from = onnx_opset->version(), to = std::clamp(from, kImporterOpsets[0], kImporterOpsets[1]);
  if (from == to) return "";
  for (const auto& n : model.graph().node()) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") return "";
    const onnx::OpSchema* a = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(from), "");
    const onnx::OpSchema* b = onnx::OpSchemaRegistry::Schema(n.op_type(), static_cast<int>(to), "");
    if (!a || !b || a->SinceVersion() != b->SinceVersion()) return "";
  }
  onnx_opset->set_version(to);
  return "read at opset " + std::to_string(to) + ": its operators are those of opset " + std::to_string(from);
}

// ONNX operators that work value by value (numpy broadcasting of their other
// inputs, aligned on the last axis): the same values come out of an input
// given more leading axes of size 1.
// clang-format off
const std::set<std::string> kElementwise = {
    "Abs", "Add", "Ceil", "Celu", "Clip", "Constant", "Div", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid",
    "HardSwish", "Identity", "LeakyRelu", "Log", "Max", "Mean", "Min", "Mish", "Mul", "Neg", "Pow", "PRelu",
    "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Softplus", "Softsign", "Sqrt", "Sub", "Sum", "Tanh",
    "ThresholdedRelu"};
// clang-format on

// A graph of elementwise operators whose image input has fewer than 4 axes
// reads it as N x C x H x W with leading axes of size 1 (the same values out);
// "" when it is not changed, else a note saying so.
std::string lift_to_images(onnx::GraphProto& g, const std::set<std::string>& bound) {
  onnx::ValueInfoProto* in = nullptr;
  for (auto& v : *g.mutable_input())
    if (!bound.count(v.name())) {
      in = &v;
      break;
    }
  if (!in || !in->type().has_tensor_type() || !in->type().tensor_type().has_shape()) return "";
  onnx::TensorShapeProto& shape = *in->mutable_type()->mutable_tensor_type()->mutable_shape();
  if (shape.dim_size() >= 4) return "";
  for (const auto& n : g.node())
    if (!kElementwise.count(n.op_type()) || !(n.domain().empty() || n.domain() == "ai.onnx")) return "";
  onnx::TensorShapeProto lifted;
  for (int k = shape.dim_size(); k < 4; ++k) lifted.add_dim()->set_dim_value(1);
  for (const auto& d : shape.dim()) *lifted.add_dim() = d;
  shape = lifted;
  std::string dims;
  for (const auto& d : shape.dim()) dims += (dims.empty() ? "" : "x") + std::to_string(d.dim_value());
  return "elementwise, read as " + dims;
}

// The model with its inputs after the first bound to the test's values: each
// becomes an initializer and leaves the graph's inputs; its opset is moved
// (move_opset: `note` says so). With `flatten`, a 4-D output becomes 2-D
// through an ONNX Flatten appended (same values, same order): octet's models
// return one vector per image.
onnx::ModelProto test_model(const std::string& dir, bool flatten, std::string* note) {
  const std::vector<uint8_t> bytes = read_file_bytes(dir + "/model.onnx");
  onnx::ModelProto model;
  check(model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())), dir + "/model.onnx is not a model");
  onnx::GraphProto& g = *model.mutable_graph();
  std::set<std::string> initializer;
  for (const auto& t : g.initializer()) initializer.insert(t.name());
  std::vector<onnx::ValueInfoProto> kept;
  int k = 0;
  for (const auto& in : g.input()) {
    if (initializer.count(in.name())) {
      kept.push_back(in);
      continue;
    }
    const std::string file = dir + "/test_data_set_0/input_" + std::to_string(k) + ".pb";
    if (k++ == 0 || !file_exists(file)) {
      kept.push_back(in);
      continue;
    }
    onnx::TensorProto* t = g.add_initializer();
    *t = read_tensor(file);
    t->set_name(in.name());
    initializer.insert(in.name());
  }
  g.clear_input();
  for (auto& in : kept) *g.add_input() = std::move(in);
  const std::string lifted = lift_to_images(g, initializer);
  *note = move_opset(model);
  if (!lifted.empty()) *note = lifted + (note->empty() ? "" : "; " + *note);
  if (flatten && g.output_size() == 1 &&
      (!lifted.empty() || read_tensor(dir + "/test_data_set_0/output_0.pb").dims_size() == 4)) {
    onnx::NodeProto& n = *g.add_node();
    n.set_op_type("Flatten");
    n.set_name("appended_flatten");
    n.add_input(g.output(0).name());
    n.add_output(g.output(0).name() + "_flat");
    g.mutable_output(0)->set_name(n.output(0));
    g.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  }
  return model;
}

// octet's output as ONNX lays it out (N, C, H, W): the executor keeps NHWC,
// and a flatten keeps the H, W, C order of what it flattens.
std::vector<float> nchw_output(const FloatExecutor& ex, const std::vector<float>& y, int64_t batch) {
  const Graph& g = ex.graph();
  int source = static_cast<int>(g.nodes.size()) - 1;
  while (g.nodes[source].op == Op::Flatten) source = g.nodes[source].inputs.at(0);
  const ActShape s = ex.shapes()[source];
  check(static_cast<int64_t>(y.size()) == batch * s.numel(), "the executor returned " + std::to_string(y.size()) +
                                                                 " values for " + std::to_string(batch) + " x " +
                                                                 to_string(s));
  std::vector<float> out(y.size());
  for (int64_t n = 0; n < batch; ++n)
    for (int c = 0; c < s.c; ++c)
      for (int h = 0; h < s.h; ++h)
        for (int w = 0; w < s.w; ++w) out[((n * s.c + c) * s.h + h) * s.w + w] = y[((n * s.h + h) * s.w + w) * s.c + c];
  return out;
}

// The importer drops a final Softmax or LogSoftmax over the classes (axis 1; it changes no prediction) and
// refuses any other: applied here to octet's output, as ONNX computes it, the rest is compared.
std::vector<float> with_dropped_softmax(const onnx::ModelProto& m, std::vector<float> y, const onnx::TensorProto& out) {
  const std::string& op = m.graph().node(m.graph().node_size() - 1).op_type();
  if ((op != "Softmax" && op != "LogSoftmax") || out.dims_size() < 2) return y;
  const int64_t classes = out.dims(1), images = out.dims(0), per_class = static_cast<int64_t>(y.size()) /
                                                                           (images * classes);
  for (int64_t n = 0; n < images; ++n)
    for (int64_t p = 0; p < per_class; ++p) {
      float* first = y.data() + n * classes * per_class + p;
      double top = first[0], sum = 0;
      for (int64_t c = 1; c < classes; ++c) top = std::max(top, double(first[c * per_class]));
      for (int64_t c = 0; c < classes; ++c) sum += std::exp(first[c * per_class] - top);
      for (int64_t c = 0; c < classes; ++c) {
        const double shifted = first[c * per_class] - top;
        first[c * per_class] = static_cast<float>(op == "Softmax" ? std::exp(shifted) / sum : shifted - std::log(sum));
      }
    }
  return y;
}

// "" when `got` matches `expected` at the suite's tolerance, else where not.
std::string compare(const std::vector<float>& got, const std::vector<double>& expected) {
  if (got.size() != expected.size())
    return "octet computes " + std::to_string(got.size()) + " values, ONNX's output has " +
           std::to_string(expected.size());
  int64_t worst = -1, wrong = 0;
  double worst_excess = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = got[i], b = expected[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;  // infinities too
    const double excess = std::abs(a - b) / (kAtol + kRtol * std::abs(b));
    if (!(excess <= 1)) {
      ++wrong;
      if (!(excess <= worst_excess)) worst_excess = excess, worst = static_cast<int64_t>(i);
    }
  }
  if (wrong == 0) return "";
  char text[200];
  std::snprintf(text, sizeof text, "%lld of %zu values off, worst at %lld: octet %.9g, ONNX %.9g",
                static_cast<long long>(wrong), got.size(), static_cast<long long>(worst), got[worst], expected[worst]);
  return text;
}

// Imports, runs and compares one node test (its folder `dir`, its name `name`).
Outcome run_node_test(const std::string& dir, const std::string& name, const std::vector<double>* expected = nullptr,
                      bool flatten = true) {
  std::string note;
  onnx::ModelProto model;
  try {
    model = test_model(dir, flatten, &note);
  } catch (const std::exception& e) {
    return {Result::Failure, std::string("the node test could not be read: ") + e.what(), note};
  }
  Checkpoint c;
  try {
    c = import_onnx_model(model, name, OnnxImportOptions{});
  } catch (const Error& e) {
    std::string why = e.what();
    if (why.compare(0, name.size() + 2, name + ": ") == 0) why = why.substr(name.size() + 2);
    return {Result::Refused, why, note};
  } catch (const std::exception& e) {
    return {Result::Failure, std::string("the importer threw a non-octet error: ") + e.what(), note};
  }
  try {
    TempDir tmp;  // what `octet import` writes and every command reads
    save_checkpoint(c, tmp.path("m.octet"));
    c = load_checkpoint(tmp.path("m.octet"));
    const FloatExecutor ex(fold_for_inference(c.graph, c.params));
    const onnx::TensorProto in = read_tensor(dir + "/test_data_set_0/input_0.pb");
    const onnx::TensorProto out = read_tensor(dir + "/test_data_set_0/output_0.pb");
    const std::vector<double> x64 = tensor_values(in);
    const std::vector<float> x(x64.begin(), x64.end());
    const int64_t batch = static_cast<int64_t>(x.size()) / ex.shapes()[0].numel();
    if (batch < 1 || batch * ex.shapes()[0].numel() != static_cast<int64_t>(x.size()))
      return {Result::Failure,
              "imported for " + to_string(ex.shapes()[0]) + " images, and input_0 is " + dims_string(in), note};
    const FloatTensor y = ex.run(x.data(), batch);
    const std::string diff = compare(with_dropped_softmax(model, nchw_output(ex, y.data, batch), out),
                                     expected ? *expected : tensor_values(out));
    if (!diff.empty()) return {Result::Failure, diff + " (output " + dims_string(out) + ")", note};
    return {Result::Pass, "", note};
  } catch (const std::exception& e) {
    return {Result::Failure, std::string("imported, then: ") + e.what(), note};
  }
}

bool in_selection(const std::string& name) {
  for (const std::string& t : kOperatorTests)
    if (name == t) return true;
  for (const std::string& p : kOperators)
    if (name.compare(0, p.size(), p) == 0) return true;
  return false;
}

// A refusal without its particulars, to group by: the operator it names, the
// reason with names, lists and numbers replaced.
std::string reason_group(const std::string& why) {
  static const std::regex node(R"(^node '[^']*' \(([^,]+), opset \d+\): )");
  std::string op, rest = why;
  std::smatch m;
  if (std::regex_search(why, m, node)) op = m[1].str() + ": ", rest = m.suffix().str();
  rest = std::regex_replace(rest, std::regex(R"('[^']*')"), "'.'");
  rest = std::regex_replace(rest, std::regex(R"(\[[^\]]*\])"), "[.]");
  rest = std::regex_replace(rest, std::regex(R"(\b\d+(\.\d+)?\b)"), "#");
  const size_t cut = rest.find(" (");  // a refusal's advice in parentheses
  if (cut != std::string::npos && cut > 20) rest = rest.substr(0, cut);
  return op + rest;
}

std::string node_tests_dir() {
  const char* dir = std::getenv("OCTET_ONNX_NODE_TESTS");
  return dir && *dir ? dir : kDefaultNodeTests;
}

struct Counts {
  int pass = 0, refused = 0, failed = 0;
  std::map<std::string, int> reasons;
  void add(const Outcome& o) {
    (o.result == Result::Pass ? pass : o.result == Result::Refused ? refused : failed) += 1;
    if (o.result == Result::Refused) ++reasons[reason_group(o.reason)];
  }
};

void print_counts(const char* what, const Counts& c) {
  std::printf("%s: %d passed, %d refused, %d failed\n", what, c.pass, c.refused, c.failed);
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [reason, n] : c.reasons) by_count.push_back({-n, reason});
  std::sort(by_count.begin(), by_count.end());
  for (const auto& [n, reason] : by_count) std::printf("  refused %3d  %s\n", -n, reason.c_str());
}

TEST(OnnxNodeSuite, EveryNodeTestPassesOrIsRefused) {
  const std::string root = node_tests_dir();
  if (!directory_exists(root))
    GTEST_SKIP() << "no ONNX node tests at " << root << " (Debian: apt-get install libonnx-testdata)";
  Counts selected, others;
  std::vector<std::string> failures;
  std::printf("%-52s %-8s %s\n", "node test", "result", "reason");
  for (const std::string& name : list_directory(root)) {
    const std::string dir = root + "/" + name;
    if (name.compare(0, 5, "test_") != 0 || !file_exists(dir + "/model.onnx") ||
        !file_exists(dir + "/test_data_set_0/output_0.pb"))
      continue;
    const Outcome o = run_node_test(dir, name);
    const bool listed = in_selection(name);
    (listed ? selected : others).add(o);
    if (o.result == Result::Failure) failures.push_back(name + ": " + o.reason);
    if (listed || o.result != Result::Refused)
      std::printf("%-52s %-8s %s%s\n", name.c_str(), result_name(o.result), o.reason.c_str(),
                  o.note.empty() ? "" : (" [" + o.note + "]").c_str());
  }
  print_counts("node tests", selected);
  print_counts("other node tests", others);
  std::fflush(stdout);
  ASSERT_GT(selected.pass + selected.refused + selected.failed, 0) << "no node tests of octet's operators in " << root;
  std::string failed;
  for (const std::string& f : failures) failed += "\n  " + f;
  EXPECT_TRUE(failures.empty()) << failures.size() << " node tests imported and then failed:" << failed;
  EXPECT_GE(selected.pass, kMinimumPasses) << "fewer node tests pass than the " << kMinimumPasses << " measured";
}

// The suite can fail: a node test that passes, given an expected output one
// tolerance step off, is a FAILURE.
TEST(OnnxNodeSuite, AWrongNumberIsAFailure) {
  const std::string dir = node_tests_dir() + "/test_globalaveragepool";
  if (!file_exists(dir + "/model.onnx")) GTEST_SKIP() << "no ONNX node test at " << dir;
  ASSERT_EQ(run_node_test(dir, "test_globalaveragepool").result, Result::Pass);
  std::vector<double> expected = tensor_values(read_tensor(dir + "/test_data_set_0/output_0.pb"));
  expected[1] = expected[1] * (1 + 2 * kRtol) + 2 * kAtol;
  const Outcome o = run_node_test(dir, "test_globalaveragepool", &expected);
  EXPECT_EQ(o.result, Result::Failure);
  EXPECT_NE(o.reason.find("1 of 3 values off, worst at 1"), std::string::npos) << o.reason;
}

// A model that returns an image per image (a convolution's output) imports as
// it is: its conv is the output layer, whose int32 accumulators are an image of
// logits. Before, such models were refused ("octet's models return a vector of
// logits").
TEST(OnnxNodeSuite, AnImageOutputImportsAsItIs) {
  const std::string dir = node_tests_dir() + "/test_basic_conv_with_padding";
  if (!file_exists(dir + "/model.onnx")) GTEST_SKIP() << "no ONNX node test at " << dir;
  const Outcome o = run_node_test(dir, "test_basic_conv_with_padding", nullptr, false);
  EXPECT_EQ(o.result, Result::Pass) << o.reason;
  EXPECT_EQ(run_node_test(dir, "test_basic_conv_with_padding").result, Result::Pass);  // flattened
}

// Writes `message` (a model or a tensor) to `path`.
void write_proto(const google::protobuf::MessageLite& message, const std::string& path) {
  const std::string bytes = message.SerializeAsString();
  write_file_atomically(path, [&](std::ostream& out) { out << bytes; });
}

// Dilated convs (ONNX 1.12 has no node test of one): test_basic_conv_with_padding's
// 5x5 image and model, its 3x3 weight made asymmetric and the conv given
// dilations, padding and stride, against the convolution computed here tap
// by tap. Unequal dilations are refused naming them.
TEST(OnnxNodeSuite, DilatedConvsMatchADirectConvolution) {
  const std::string source = node_tests_dir() + "/test_basic_conv_with_padding";
  if (!file_exists(source + "/model.onnx")) GTEST_SKIP() << "no ONNX node test at " << source;
  const onnx::TensorProto image = read_tensor(source + "/test_data_set_0/input_0.pb");
  ASSERT_EQ(dims_string(image), "[1,1,5,5]");
  const std::vector<double> x = tensor_values(image);
  onnx::TensorProto weight = read_tensor(source + "/test_data_set_0/input_1.pb");
  ASSERT_EQ(dims_string(weight), "[1,1,3,3]");
  weight.clear_raw_data();
  weight.clear_float_data();
  for (int k = 0; k < 9; ++k) weight.add_float_data(static_cast<float>(k + 1));
  struct Case {
    int64_t dilation_y, dilation_x, padding, stride;
  };
  for (const Case& c : {Case{2, 2, 2, 1}, Case{3, 3, 2, 2}, Case{2, 2, 0, 1}, Case{1, 2, 1, 1}}) {
    const std::string name = "dilated_conv_d" + std::to_string(c.dilation_y) + "x" + std::to_string(c.dilation_x) +
                             "_p" + std::to_string(c.padding) + "_s" + std::to_string(c.stride);
    onnx::ModelProto model;
    const std::vector<uint8_t> bytes = read_file_bytes(source + "/model.onnx");
    ASSERT_TRUE(model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
    onnx::NodeProto& conv = *model.mutable_graph()->mutable_node(0);
    ASSERT_EQ(conv.op_type(), "Conv");
    const auto set_ints = [&conv](const std::string& attribute, const std::vector<int64_t>& values) {
      onnx::AttributeProto* a = nullptr;
      for (auto& existing : *conv.mutable_attribute())
        if (existing.name() == attribute) a = &existing;
      if (!a) a = conv.add_attribute();
      a->Clear();
      a->set_name(attribute);
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : values) a->add_ints(v);
    };
    set_ints("pads", {c.padding, c.padding, c.padding, c.padding});
    set_ints("strides", {c.stride, c.stride});
    set_ints("dilations", {c.dilation_y, c.dilation_x});
    TempDir tmp;
    const std::string dir = tmp.path(name);
    make_directories(dir + "/test_data_set_0");
    write_proto(model, dir + "/model.onnx");
    write_proto(image, dir + "/test_data_set_0/input_0.pb");
    write_proto(weight, dir + "/test_data_set_0/input_1.pb");
    write_proto(read_tensor(source + "/test_data_set_0/output_0.pb"), dir + "/test_data_set_0/output_0.pb");
    if (c.dilation_y != c.dilation_x) {
      const Outcome o = run_node_test(dir, name);
      EXPECT_EQ(o.result, Result::Refused) << name;
      EXPECT_NE(o.reason.find("dilations [1,2]: octet's are alike in both directions"), std::string::npos) << o.reason;
      continue;
    }
    const int64_t d = c.dilation_y, out = (5 + 2 * c.padding - (2 * d + 1)) / c.stride + 1;
    std::vector<double> expected;
    for (int64_t oy = 0; oy < out; ++oy)
      for (int64_t ox = 0; ox < out; ++ox) {
        double sum = 0;
        for (int64_t ky = 0; ky < 3; ++ky)
          for (int64_t kx = 0; kx < 3; ++kx) {
            const int64_t iy = oy * c.stride - c.padding + ky * d, ix = ox * c.stride - c.padding + kx * d;
            if (iy >= 0 && iy < 5 && ix >= 0 && ix < 5) sum += x[iy * 5 + ix] * weight.float_data(ky * 3 + kx);
          }
        expected.push_back(sum);
      }
    const Outcome o = run_node_test(dir, name, &expected);
    EXPECT_EQ(o.result, Result::Pass) << name << ": " << o.reason;
  }
}

}  // namespace
}  // namespace octet
