// cuBLASLt, opened the first time the cuda-cublaslt backend needs it.
// Linking it instead would load its 540 MB library and run its start-up code
// in every octet process: 0.38 s for each command and each test on the 2-core
// build machine, GPU or not, for a backend most runs never use.
#pragma once

#include <cublasLt.h>

namespace octet::cuda {

// The cuBLASLt functions the runtime calls, resolved from the library.
struct CublasLtLibrary {
  decltype(&cublasLtCreate) create;
  decltype(&cublasLtDestroy) destroy;
  decltype(&cublasLtGetStatusName) status_name;
  decltype(&cublasLtGetStatusString) status_string;
  decltype(&cublasLtMatmul) matmul;
  decltype(&cublasLtMatmulAlgoGetHeuristic) algo_get_heuristic;
  decltype(&cublasLtMatmulDescCreate) desc_create;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set_attribute;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set_attribute;
  decltype(&cublasLtMatrixLayoutCreate) layout_create;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy;
};

// Opens the library on the first call (the one from the CUDA toolkit octet
// was built with, else the loader's search path); fails naming the library
// and the loader's reason when it or one of its functions is missing.
const CublasLtLibrary& cublaslt();

}  // namespace octet::cuda
