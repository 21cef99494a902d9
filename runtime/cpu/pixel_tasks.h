// How a conv kernel shares its output pixels (lines of them: output rows, or
// the one line of a 1x1 conv's pixels) into tasks: runs of whole lines,
// or runs of register blocks of each line; as few as the most a task may hold
// allows, their number rounded up to a multiple of the threads where there
// are that many lines (blocks of the one line), the work spread as evenly as
// integers allow. Tasks of a fixed size leave a short last one: ResNet-50's
// 7x7 layers at batch 16 (784 pixels) were three tasks of 256 pixels and one
// of 16, and one of two threads did two thirds of the work.
//
// Defined out of line (pixel_tasks.cpp, baseline instructions): the AVX2 and
// AVX-512 kernels share it, and inline functions they shared could be
// emitted with their instructions and picked by the linker for every caller.
#pragma once

#include <cstdint>

namespace octet::cpu {

class PixelTasks {
 public:
  struct Span {
    int64_t first_line, end_line;  // lines [first_line, end_line)
    int64_t first, count;          // pixels [first, first + count) of each
  };
  // Runs of at most `most_lines` whole lines.
  static PixelTasks of_lines(int64_t lines, int64_t line_pixels, int64_t most_lines, int64_t threads);
  // Runs of at most `most_blocks` blocks of `block` pixels (the last may be short) of each line.
  static PixelTasks of_blocks(int64_t lines, int64_t line_pixels, int64_t block, int64_t most_blocks,
                              int64_t threads);
  int64_t count() const;
  Span span(int64_t task) const;

 private:
  PixelTasks(int64_t lines, int64_t line_pixels, int64_t block, int64_t units, int64_t shares);
  int64_t lines_, line_pixels_;
  int64_t block_;   // pixels per block; 0: tasks of whole lines
  int64_t units_;   // what is shared: lines, or the blocks of each line
  int64_t shares_;  // runs of units: the tasks, or the tasks of each line
};

}  // namespace octet::cpu
