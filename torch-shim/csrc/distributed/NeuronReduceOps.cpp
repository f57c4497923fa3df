// SPDX-License-Identifier: MIT
// The c10d backend "neuron" (NeuronProcessGroup.h): which reductions the
// card's link engines do as the data moves, and the others, folded on the
// card once the ranks' blocks are together.
#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include "NeuronProcessGroup.h"

namespace torch_neuron {

const char* reduce_name(c10d::ReduceOp op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

static bool link_dtype_ok(const at::Tensor& t) {
  auto st = t.scalar_type();
  return st == at::kFloat || st == at::kDouble || st == at::kBFloat16 || st == at::kHalf;
}

bool link_reduces(const at::Tensor& t, c10d::ReduceOp op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
    case c10d::ReduceOp::AVG:
    case c10d::ReduceOp::PRODUCT:
    case c10d::ReduceOp::MIN:
    case c10d::ReduceOp::MAX:
    case c10d::ReduceOp::PREMUL_SUM:
      return link_dtype_ok(t);
    default:
      return false;
  }
}

nrn_reduce_op link_op(c10d::ReduceOp op) {
  switch (op.op_) {
    case c10d::ReduceOp::AVG: return NRN_REDUCE_AVG;
    case c10d::ReduceOp::PRODUCT: return NRN_REDUCE_PROD;
    case c10d::ReduceOp::MIN: return NRN_REDUCE_MIN;
    case c10d::ReduceOp::MAX: return NRN_REDUCE_MAX;
    default: return NRN_REDUCE_SUM;  // SUM, and PREMUL_SUM once multiplied
  }
}

nisa_dtype link_dtype(const at::Tensor& t) {
  switch (t.scalar_type()) {
    case at::kBFloat16: return NISA_BF16;
    case at::kHalf: return NISA_F16;
    case at::kDouble: return NISA_F64;
    default: return NISA_F32;
  }
}

void check_reduction(const at::Tensor& t, c10d::ReduceOp op, const char* name) {
  if (link_reduces(t, op))
    return;
  bool integral = at::isIntegralType(t.scalar_type(), /*includeBool=*/true);
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
    case c10d::ReduceOp::PRODUCT:
    case c10d::ReduceOp::MIN:
    case c10d::ReduceOp::MAX:
    case c10d::ReduceOp::BAND:
    case c10d::ReduceOp::BOR:
    case c10d::ReduceOp::BXOR:
      TORCH_CHECK(integral, "neuron: ", name, " with ReduceOp.", reduce_name(op),
                  " does not support dtype ", t.scalar_type(), " (bitwise "
                  "reductions take integer and bool tensors)");
      return;
    case c10d::ReduceOp::AVG:
    case c10d::ReduceOp::PREMUL_SUM:
      TORCH_CHECK(false, "neuron: ", name, " with ReduceOp.", reduce_name(op),
                  " does not support dtype ", t.scalar_type(), " (it takes "
                  "float32, float64, bfloat16 and float16: an average of integers is "
                  "not an integer)");
    default:
      TORCH_CHECK(false, "neuron: ", name, " does not support ReduceOp.",
                  reduce_name(op));
  }
}

at::Tensor premultiply(const at::Tensor& t, c10d::ReduceOp op, bool in_place) {
  if (op.op_ != c10d::ReduceOp::PREMUL_SUM)
    return t;
  auto* sup = dynamic_cast<c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(sup, "neuron: ReduceOp.PREMUL_SUM without its factor (make it with "
              "torch.distributed._make_nccl_premul_sum)");
  at::Tensor out = in_place ? t : at::empty_like(t);
  if (sup->tensor_factor.defined())
    at::mul_out(out, t, sup->tensor_factor.to(t.device(), t.scalar_type()));
  else
    at::mul_out(out, t, at::scalar_tensor(sup->double_factor, t.options()));
  return out;
}

void fold_blocks(const at::Tensor& blocks, c10d::ReduceOp op, const at::Tensor& out) {
  at::Tensor o = out.view({-1});
  bool is_bool = blocks.scalar_type() == at::kBool;
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
    case c10d::ReduceOp::BOR:
      if (is_bool) {  // NCCL's and Gloo's rule: a bool sum is an OR
        at::any_out(o, blocks, 0);
        return;
      }
      if (op.op_ == c10d::ReduceOp::SUM) {
        at::sum_out(o, blocks, 0, false, blocks.scalar_type());
        return;
      }
      break;
    case c10d::ReduceOp::PRODUCT:
    case c10d::ReduceOp::BAND:
      if (is_bool) {
        at::all_out(o, blocks, 0);
        return;
      }
      if (op.op_ == c10d::ReduceOp::PRODUCT) {
        at::prod_out(o, blocks, 0, false, blocks.scalar_type());
        return;
      }
      break;
    case c10d::ReduceOp::MIN:
      if (is_bool)
        at::all_out(o, blocks, 0);
      else
        at::amin_out(o, blocks, {0});
      return;
    case c10d::ReduceOp::MAX:
      if (is_bool)
        at::any_out(o, blocks, 0);
      else
        at::amax_out(o, blocks, {0});
      return;
    default:
      break;
  }
  // Bitwise folds, rank after rank.
  o.copy_(blocks[0]);
  for (int64_t r = 1; r < blocks.size(0); r++) {
    if (op.op_ == c10d::ReduceOp::BAND)
      o.bitwise_and_(blocks[r]);
    else if (op.op_ == c10d::ReduceOp::BOR)
      o.bitwise_or_(blocks[r]);
    else
      o.bitwise_xor_(blocks[r]);
  }
}

}  // namespace torch_neuron
