// SPDX-License-Identifier: MIT
// ATen's own meta functions for the card's kernels: an operator's result
// tensors -- their shape, type, layout and the checks of its arguments --
// come from the same code that shapes them for the CPU and CUDA, so the
// shim writes none of those rules again.
//
// Two kinds, as ATen has them:
// - the structured kernels' meta classes (at::meta::structured_<op>,
//   ATen/ops/<op>_meta.h), run through NeuronMeta below;
// - TensorIterator's config builders (binary_op, comparison_op, unary_op,
//   ...), which the elementwise families use (NeuronElementwise.h).
// Only the shapes are taken: the card iterates, broadcasts and casts in its
// own instructions, so no TensorIterator loop or temporary runs.
#pragma once

#include <array>
#include <tuple>
#include <type_traits>

#include <ATen/TensorIterator.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorMeta.h>
#include <ATen/native/Resize.h>

#include "NeuronOps.h"

namespace torch_neuron {

// Which form of an operator is being run: a new result, out=, or in place
// on its first argument.
enum class Form { Functional, Out, Inplace };

// The result tensors of structured operator @Meta (N of them): its meta()
// is called as ATen's generated CPU kernels call it, and its results are
// made here (functional), checked and resized (out=, with the checks and
// messages of ATen's out= kernels), or checked to be self (in place). The
// card's kernels accept any strides, so a given tensor is never replaced
// by a proxy. For a TensorIterator-based meta the iterator's operands are
// set too, as ATen's set_output_raw_strided does.
template <class Meta, size_t N = 1>
struct NeuronMeta final : Meta {
  std::array<at::Tensor, N> outs;
  Form form;

  explicit NeuronMeta(Form f = Form::Functional, std::array<at::Tensor, N> given = {})
      : outs(std::move(given)), form(f) {}

  const at::Tensor& maybe_get_output(int64_t i) override { return outs.at(i); }

  void set_output_raw_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                              at::TensorOptions options, at::DimnameList names) override {
    set_output(i, sizes, strides, options, names);
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Meta>)
      Meta::set_output_raw_strided(i, sizes, strides, options, names);
  }
  void set_output_strided(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                          at::TensorOptions options, at::DimnameList names) override {
    set_output_raw_strided(i, sizes, strides, options, names);
  }

 private:
  void set_output(int64_t i, at::IntArrayRef sizes, at::IntArrayRef strides,
                  at::TensorOptions options, at::DimnameList names) {
    at::Tensor& t = outs.at(i);
    if (form == Form::Functional) {
      t = strides.empty() ? at::empty(sizes, options) : at::empty_strided(sizes, strides, options);
    } else if (form == Form::Inplace) {
      TORCH_CHECK(options.dtype() == t.dtype(), "Bad in-place call: input tensor dtype ",
                  t.dtype(), " and output tensor dtype ", options.dtype(), " should match");
      TORCH_CHECK(options.device() == t.device(), "Bad in-place call: input tensor device ",
                  t.device(), " and output tensor device ", options.device(), " should match");
      TORCH_CHECK(sizes == t.sizes(), "Bad in-place call: input tensor size ", t.sizes(),
                  " and output tensor size ", sizes, " should match");
    } else {
      TORCH_CHECK(options.dtype() == t.dtype(), "Expected out tensor to have dtype ",
                  options.dtype(), ", but got ", t.dtype(), " instead");
      TORCH_CHECK(options.device() == t.device(), "Expected out tensor to have device ",
                  options.device(), ", but got ", t.device(), " instead");
      // A resized out= takes the meta's strides or memory format (a
      // channels-last result), as ATen's resize_out gives it.
      if (at::native::resize_output(t, sizes)) {
        if (!strides.empty())
          t.as_strided_(sizes, strides);
        else if (options.memory_format_opt())
          t.unsafeGetTensorImpl()->empty_tensor_restride(*options.memory_format_opt());
      }
    }
    if (!names.empty())
      at::namedinference::propagate_names(t, names);
  }
};

// Whether @out may share elements with @in: ATen's overlap status when
// both lie in one storage (where it cannot tell, say for a broadcast
// input, they may), never for distinct storages. A kernel that reads its
// input while writing its result (a reduction, softmax) writes into a
// temporary when they may.
inline bool may_share_elements(const at::TensorBase& out, const at::TensorBase& in) {
  if (!out.has_storage() || !in.has_storage() || !out.storage().is_alias_of(in.storage()))
    return false;
  return at::get_overlap_status(out, in) != at::MemOverlapStatus::No;
}

// An optional argument as structured metas take it.
inline at::OptionalScalarRef opt_ref(const std::optional<at::Scalar>& s) {
  return s ? at::OptionalScalarRef(&*s) : at::OptionalScalarRef();
}
inline at::OptionalTensorRef opt_ref(const std::optional<at::Tensor>& t) {
  return t && t->defined() ? at::OptionalTensorRef(*t) : at::OptionalTensorRef();
}

// The results of structured operator @Meta on @args, in @form (@given: the
// out= tensors, or self in place).
template <class Meta, size_t N = 1, class... Args>
std::array<at::Tensor, N> meta_results(Form form, std::array<at::Tensor, N> given,
                                       const Args&... args) {
  NeuronMeta<Meta, N> m(form, std::move(given));
  m.meta(args...);
  return m.outs;
}

// The results of structured operator @Meta on @args in @form, with the
// values that @compute (called on @args) returns as new tensors -- one
// tensor or a tuple of N -- copied into them: for kernels that compute
// elsewhere (a batched or padded layout) than the meta's tensors. A
// functional result that has the meta's type and strides, in memory of
// its own (no view of an input), is taken as it is.
template <class Meta, size_t N, class F, class... Args>
std::array<at::Tensor, N> computed_results(Form form, std::array<at::Tensor, N> given,
                                           F&& compute, const Args&... args) {
  std::array<at::Tensor, N> r = meta_results<Meta, N>(form, std::move(given), args...);
  auto vals = compute(args...);
  auto put = [&r, form](size_t i, const at::Tensor& v) {
    TORCH_INTERNAL_ASSERT(r[i].sizes() == v.sizes(), "neuron: a result of ", v.sizes(),
                          " for the meta's ", r[i].sizes());
    if (form == Form::Functional && v.dtype() == r[i].dtype() &&
        v.strides() == r[i].strides() && !v.has_names() && v.has_storage() &&
        v.storage().use_count() == 1)
      r[i] = v;
    else if (r[i].numel())
      r[i].copy_(v);
  };
  if constexpr (std::is_same_v<std::decay_t<decltype(vals)>, at::Tensor>) {
    static_assert(N == 1);
    put(0, vals);
  } else {
    static_assert(std::tuple_size_v<decltype(vals)> == N);
    size_t i = 0;
    std::apply([&](const auto&... v) { (put(i++, v), ...); }, vals);
  }
  return r;
}

// @r as the tuple a kernel returns.
template <size_t N>
auto as_tuple(const std::array<at::Tensor, N>& r) {
  return std::apply([](const auto&... t) { return std::make_tuple(t...); }, r);
}

// The functional and out= kernels of structured operator @Meta whose
// values kernel F computes as new tensors (computed_results): F's
// arguments are the operator's, its results one tensor or a tuple of 2 to
// 4; out() takes the out= tensors after them, as the schema's overload.
template <class Meta, auto F>
struct Computed;
template <class Meta, class... A, at::Tensor (*F)(A...)>
struct Computed<Meta, F> {
  static at::Tensor functional(A... a) {
    return computed_results<Meta, 1>(Form::Functional, {}, F, a...)[0];
  }
  static at::Tensor& out(A... a, at::Tensor& o) {
    computed_results<Meta, 1>(Form::Out, {o}, F, a...);
    return o;
  }
};
template <class Meta, class... A, std::tuple<at::Tensor, at::Tensor> (*F)(A...)>
struct Computed<Meta, F> {
  static std::tuple<at::Tensor, at::Tensor> functional(A... a) {
    return as_tuple(computed_results<Meta, 2>(Form::Functional, {}, F, a...));
  }
  static std::tuple<at::Tensor&, at::Tensor&> out(A... a, at::Tensor& o0, at::Tensor& o1) {
    computed_results<Meta, 2>(Form::Out, {o0, o1}, F, a...);
    return {o0, o1};
  }
};
template <class Meta, class... A, std::tuple<at::Tensor, at::Tensor, at::Tensor> (*F)(A...)>
struct Computed<Meta, F> {
  static std::tuple<at::Tensor, at::Tensor, at::Tensor> functional(A... a) {
    return as_tuple(computed_results<Meta, 3>(Form::Functional, {}, F, a...));
  }
  static std::tuple<at::Tensor&, at::Tensor&, at::Tensor&> out(A... a, at::Tensor& o0,
                                                               at::Tensor& o1, at::Tensor& o2) {
    computed_results<Meta, 3>(Form::Out, {o0, o1, o2}, F, a...);
    return {o0, o1, o2};
  }
};
template <class Meta, class... A,
          std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> (*F)(A...)>
struct Computed<Meta, F> {
  static std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor> functional(A... a) {
    return as_tuple(computed_results<Meta, 4>(Form::Functional, {}, F, a...));
  }
  static std::tuple<at::Tensor&, at::Tensor&, at::Tensor&, at::Tensor&> out(
      A... a, at::Tensor& o0, at::Tensor& o1, at::Tensor& o2, at::Tensor& o3) {
    computed_results<Meta, 4>(Form::Out, {o0, o1, o2, o3}, F, a...);
    return {o0, o1, o2, o3};
  }
};

}  // namespace torch_neuron

// Registers structured operator @name's functional kernel and its out=
// overload @ovl (the overload's name) as Computed<structured_@M, @F>.
#define NEURON_COMPUTED_IMPL(m, name, ovl, M, F)                                    \
  m.impl(name, ::torch_neuron::Computed<at::meta::structured_##M, F>::functional);  \
  m.impl(name "." ovl, ::torch_neuron::Computed<at::meta::structured_##M, F>::out);
