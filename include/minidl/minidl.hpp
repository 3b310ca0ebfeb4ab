#pragma once
// minidl: a small deep-learning framework. One include for all of it.
#include "minidl/autograd/grad_mode.hpp"
#include "minidl/autograd/node.hpp"
#include "minidl/ops/binary.hpp"
#include "minidl/ops/matmul.hpp"
#include "minidl/ops/reduce.hpp"
#include "minidl/ops/shape_ops.hpp"
#include "minidl/ops/softmax.hpp"
#include "minidl/ops/unary.hpp"
#include "minidl/tensor/error.hpp"
#include "minidl/tensor/generator.hpp"
#include "minidl/tensor/shape.hpp"
#include "minidl/tensor/tensor.hpp"
