// Which operators the CUDA runtime runs, as its table of can_implement checks
// (op_support.cpp; plain C++, so any machine can ask): the engine refuses a
// model holding a node none of its kernels can run, naming the node, and the
// tests' host executor of the device layout skips such models likewise.
#pragma once

#include <string>

#include "graph/graph.h"
#include "qmodel/quantized_model.h"

namespace octet::cuda {

// "" when the CUDA runtime has a kernel for the node (its operator and
// attributes), else why not.
std::string why_node_unsupported(const Node& n);
// "" when it runs every node of `g`, else "why, at node 'x' (op)" of the first it cannot.
std::string why_graph_unsupported(const Graph& g);
// The same for a model, whose nodes kept in float (mixed precision) it refuses
// too: the CUDA backends run int8 nodes only; and wide (9-16 bit) activations,
// which cuda-dp4a and cuda-cublaslt do not read.
std::string why_model_unsupported(const QuantizedModel& m);
// cuda-imma's: wide activations too, where no dilated conv makes or reads them.
std::string why_model_unsupported_on_imma(const QuantizedModel& m);

// cuda-cublaslt's own limit beyond those: its GEMMs multiply s8 by s8, so it
// cannot run a conv or linear (but the grouped kernel's) reading a tensor
// stored unsigned (zero point -128). "" or why, for a node and for a model.
std::string why_cublaslt_cannot_run(const QuantizedModel& m, int node);
std::string why_model_unsupported_on_cublaslt(const QuantizedModel& m);

// The one of these that a CUDA backend asks, by its name (engine.h's backend_names:
// cuda-imma, cuda-dp4a, cuda-cublaslt): the registry's answer and the engine's refusal.
std::string why_model_unsupported_on(const std::string& backend, const QuantizedModel& m);

}  // namespace octet::cuda
