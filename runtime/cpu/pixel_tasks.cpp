#include "runtime/cpu/pixel_tasks.h"

namespace octet::cpu {

namespace {
// Runs of at most `most` (at least 1) of `units`: as few as can be, rounded
// up to a multiple of `threads` but no more than the units.
int64_t even_runs(int64_t units, int64_t most, int64_t threads) {
  if (most < 1) most = 1;
  const int64_t fewest = (units + most - 1) / most;
  const int64_t even = (fewest + threads - 1) / threads * threads;
  return even < units ? even : units;
}
}  // namespace

PixelTasks::PixelTasks(int64_t lines, int64_t line_pixels, int64_t block, int64_t units, int64_t shares)
    : lines_(lines), line_pixels_(line_pixels), block_(block), units_(units), shares_(shares) {}

PixelTasks PixelTasks::of_lines(int64_t lines, int64_t line_pixels, int64_t most_lines, int64_t threads) {
  return PixelTasks(lines, line_pixels, 0, lines, even_runs(lines, most_lines, threads));
}

PixelTasks PixelTasks::of_blocks(int64_t lines, int64_t line_pixels, int64_t block, int64_t most_blocks,
                                 int64_t threads) {
  const int64_t blocks = (line_pixels + block - 1) / block;
  return PixelTasks(lines, line_pixels, block, blocks, even_runs(blocks, most_blocks, lines == 1 ? threads : 1));
}

int64_t PixelTasks::count() const { return block_ ? lines_ * shares_ : shares_; }

PixelTasks::Span PixelTasks::span(int64_t task) const {
  if (!block_) return {task * units_ / shares_, (task + 1) * units_ / shares_, 0, line_pixels_};
  const int64_t line = task / shares_, run = task % shares_;
  const int64_t first = run * units_ / shares_ * block_, end = (run + 1) * units_ / shares_ * block_;
  return {line, line + 1, first, (end < line_pixels_ ? end : line_pixels_) - first};
}

}  // namespace octet::cpu
