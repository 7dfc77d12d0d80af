#pragma once
// Products against int8 / int4-group weights (quant/int_quant.h), two ways:
// - float activations, each weight row dequantized on the fly: the exact reference path;
// - int8-quantized activations with integer dot products (int_dot.h): the fast path.
// OpenMP-parallel over weight rows; each loaded row is reused for all n activation rows.
#include <cstdint>

#include "kernels/int_dot.h"
#include "quant/int_quant.h"

namespace strata::kernels {

// y[n x W.rows] = x[n x W.cols] . dequant(W)^T
void matmulDequant(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y);

// The same with activations quantized to int8 per 32-block.
void matmulInteger(const quant::QuantizedMatrix& w, const float* x, int64_t n, float* y,
                   const IntKernels& kernels);

}  // namespace strata::kernels
