#include "runtime/cpu/idle_threads.h"

#include <omp.h>

#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace octet::cpu {

bool idle_threads_spin(const char* wait_policy) {
  std::string value = wait_policy ? wait_policy : "";
  for (char& c : value) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return value != "passive";
}

bool idle_threads_spin() {
  static const bool spin = idle_threads_spin(std::getenv("OMP_WAIT_POLICY"));
  return spin;
}

int64_t min_parallel_work(int64_t spinning, int64_t sleeping) {
  if (omp_in_parallel()) return INT64_MAX;  // a share of a batch (cpu_engine.cpp): its thread is one of a region's
  return idle_threads_spin() ? spinning : sleeping;
}

}  // namespace octet::cpu
