#include "tests/ops/wide_cases.h"

#include "tests/ops/op_model.h"

namespace octet {

void add_wide_cases(std::vector<OpCase>& cases) {
  struct Wide {
    int64_t batch;
    int c, h, w, stream_c, bits;
    int kernel, stride, padding;  // of the conv reading the stream at the end
    Requant requant;              // of the convs writing the stream
  };
  // MobileNetV2's residual stream: conv -> wide -> (1x1 conv, ReLU -> 1x1 conv
  // + wide residual) -> wide -> the last conv reads it; at 16 and fewer bits,
  // requantization typical and extreme, a 3x3 strided reader; streams of 40 to
  // 100 channels for the SIMD convs' int16 stores of whole and partial pairs of blocks.
  const Wide wides[] = {
      {2, 3, 7, 7, 16, 16, 1, 1, 0, Requant::Typical},  {3, 8, 6, 5, 12, 12, 3, 2, 1, Requant::Typical},
      {2, 5, 5, 5, 24, 16, 3, 1, 1, Requant::Extreme},  {17, 4, 4, 4, 9, 9, 1, 1, 0, Requant::Typical},
      {2, 8, 5, 5, 80, 16, 1, 1, 0, Requant::Typical},  {1, 16, 4, 6, 100, 12, 3, 1, 1, Requant::Typical},
      {3, 5, 3, 3, 40, 16, 1, 1, 0, Requant::Extreme},
  };
  uint64_t seed = 9100;
  for (const Wide& v : wides) {
    const uint64_t s = seed++;
    cases.push_back({"wide_stream_" + shape_name(v.batch, v.c, v.h, v.w) + "_c" + std::to_string(v.stream_c) + "_" +
                         std::to_string(v.bits) + "bit_k" + std::to_string(v.kernel) + "s" + std::to_string(v.stride) +
                         (v.requant == Requant::Extreme ? "_extreme" : ""),
                     v.batch,
                     [v, s] {
                       OpModel m(s);
                       const int x = m.input(v.c, v.h, v.w);
                       m.set_bits(v.bits);
                       const int stream = m.conv(x, v.stream_c, 1, 1, 0, false, -1, v.requant);
                       m.set_bits(8);
                       const int expanded = m.conv(stream, 2 * v.stream_c, 1, 1, 0, true);
                       m.set_bits(v.bits);
                       const int summed = m.conv(expanded, v.stream_c, 1, 1, 0, false, stream, v.requant);
                       m.set_bits(8);
                       m.conv(summed, 8, v.kernel, v.stride, v.padding, true);
                       return m.finish();
                     },
                     CaseImages::Int8, true});
  }
}

}  // namespace octet
