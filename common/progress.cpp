#include "common/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace octet {

namespace {
bool forced_by_parent() {
  const char* value = std::getenv(kForceProgressVariable);
  return value != nullptr && std::string(value) == "1";
}
}  // namespace

Progress::Progress(std::string label, int64_t total)
    : label_(std::move(label)),
      total_(total),
      enabled_(::isatty(STDERR_FILENO) != 0 || forced_by_parent()),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() { finish(); }

void Progress::advance(int64_t n) {
  done_ += n;
  draw(false);
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!enabled_) return;
  draw(true);
  std::fprintf(stderr, "\n");
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const double pct = total_ > 0 ? 100.0 * static_cast<double>(done_) / static_cast<double>(total_) : 100.0;
  std::fprintf(stderr, "\r%s: %lld/%lld (%.0f%%) %.1fs", label_.c_str(), static_cast<long long>(done_),
               static_cast<long long>(total_), pct, seconds);
  std::fflush(stderr);
}

}  // namespace octet
