#include "runtime/cuda/cublaslt_library.h"

#include <dlfcn.h>

#include <string>

#include "common/error.h"

namespace octet::cuda {

namespace {

std::string last_dlerror() {
  const char* why = dlerror();
  return why ? why : "no reason given";
}

void* open_library() {
  // A copy the process already has (LibTorch's, in octet-torch) rather than a second one.
  if (void* handle = dlopen(OCTET_CUBLASLT_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) return handle;
  const std::string in_toolkit = std::string(OCTET_CUBLASLT_DIR) + "/" + OCTET_CUBLASLT_SONAME;
  if (void* handle = dlopen(in_toolkit.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
  const std::string toolkit_why = last_dlerror();
  void* handle = dlopen(OCTET_CUBLASLT_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    fail(std::string("the cuda-cublaslt backend needs cuBLASLt, and neither ") + in_toolkit + " (" + toolkit_why +
         ") nor " + OCTET_CUBLASLT_SONAME + " on the library path (" + last_dlerror() + ") could be opened");
  return handle;
}

template <typename Function>
void resolve(void* library, const char* name, Function* out) {
  void* symbol = dlsym(library, name);
  check(symbol != nullptr, std::string("cuBLASLt (") + OCTET_CUBLASLT_SONAME + ") has no function " + name +
                               " (an older version than octet was built with?)");
  *out = reinterpret_cast<Function>(symbol);
}

CublasLtLibrary open_cublaslt() {
  void* library = open_library();  // kept open for the life of the process
  CublasLtLibrary lt;
  resolve(library, "cublasLtCreate", &lt.create);
  resolve(library, "cublasLtDestroy", &lt.destroy);
  resolve(library, "cublasLtGetStatusName", &lt.status_name);
  resolve(library, "cublasLtGetStatusString", &lt.status_string);
  resolve(library, "cublasLtMatmul", &lt.matmul);
  resolve(library, "cublasLtMatmulAlgoGetHeuristic", &lt.algo_get_heuristic);
  resolve(library, "cublasLtMatmulDescCreate", &lt.desc_create);
  resolve(library, "cublasLtMatmulDescDestroy", &lt.desc_destroy);
  resolve(library, "cublasLtMatmulDescSetAttribute", &lt.desc_set_attribute);
  resolve(library, "cublasLtMatmulPreferenceCreate", &lt.preference_create);
  resolve(library, "cublasLtMatmulPreferenceDestroy", &lt.preference_destroy);
  resolve(library, "cublasLtMatmulPreferenceSetAttribute", &lt.preference_set_attribute);
  resolve(library, "cublasLtMatrixLayoutCreate", &lt.layout_create);
  resolve(library, "cublasLtMatrixLayoutDestroy", &lt.layout_destroy);
  return lt;
}

}  // namespace

const CublasLtLibrary& cublaslt() {
  static const CublasLtLibrary library = open_cublaslt();
  return library;
}

}  // namespace octet::cuda
