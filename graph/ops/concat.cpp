// Concat: its inputs' channels one after another (any number of inputs of
// one height and width). In int8 each input is requantized to the output's
// own scale by a multiplier of its own (one shift), as add rescales its two.
#include "common/error.h"
#include "graph/ops/int8_reference.h"

namespace octet::ops {

namespace {
ActShape shape(const Node&, const std::vector<ActShape>& in) {
  ActShape y = {0, in[0].h, in[0].w};
  for (const ActShape& x : in) {
    check(x.h == y.h && x.w == y.w, "concatenates " + to_string(in[0]) + " and " + to_string(x) +
                                        ": inputs must have one height and width");
    y.c += x.c;
  }
  return y;
}

void run_float(const FloatOpArgs& a) {
  const int64_t pixels = a.y.numel() / a.out.c;
  int first = 0;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const int channels = a.in[i].c;
    const float* x = a.inputs[i]->data.data();
    for (int64_t p = 0; p < pixels; ++p)
      for (int c = 0; c < channels; ++c) a.y.data[p * a.out.c + first + c] = x[p * channels + c];
    first += channels;
  }
}

void run_int8_reference(const Int8ReferenceArgs& a) {
  const int64_t H = a.inputs[0]->dim(2), W = a.inputs[0]->dim(3);
  int64_t C = 0;
  for (const ActTensor* x : a.inputs) C += x->dim(1);
  a.y = ActTensor({a.batch, C, H, W});
  int64_t first = 0;
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const ActTensor& x = *a.inputs[i];
    for (int64_t b = 0; b < a.batch; ++b)
      for (int64_t c = 0; c < x.dim(1); ++c)
        for (int64_t y = 0; y < H; ++y)
          for (int64_t w = 0; w < W; ++w)
            at(a.y, b, first + c, y, w) = static_cast<int16_t>(requantize(
                centered(a, i, b, c, y, w), a.q.multiplier.data[i], 0, 0, a.q.shift.data[0], -128, a.q.zero_point));
    first += x.dim(1);
  }
}
}  // namespace

//                           name      in           train  weight image  relu   resid  scale  mult         moves
extern const OpDef concat = {{Op::Concat, "concat", kAnyInputs, false, false, false, false, false, true, kAnyInputs, false},
                             shape, nullptr, nullptr, nullptr, run_float, run_int8_reference};

}  // namespace octet::ops
