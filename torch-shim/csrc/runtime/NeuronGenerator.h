// SPDX-License-Identifier: MIT
// The neuron random-number generator: a Philox4x32-10 key (the seed) and
// counter (the offset). The card draws element i of an operation from the
// counter offset + i (NISA_INSN_RANDOM), so a generator is just these two
// numbers, and each operation reserves the counters it uses.
#pragma once

#include <ATen/core/Generator.h>
#include <c10/core/GeneratorImpl.h>

#include <cstdint>
#include <utility>

namespace torch_neuron {

struct NeuronGeneratorImpl final : c10::GeneratorImpl {
  explicit NeuronGeneratorImpl(c10::DeviceIndex index,
                               uint64_t seed = c10::default_rng_seed_val);
  ~NeuronGeneratorImpl() override = default;

  void set_current_seed(uint64_t seed) override;  // and offset 0
  uint64_t current_seed() const override;
  uint64_t seed() override;  // a non-deterministic seed, set and returned
  void set_offset(uint64_t offset) override;
  uint64_t get_offset() const override;
  // A CPU uint8 tensor of kStateSize bytes: seed, offset (little endian
  // 64-bit each: torch.cuda's layout, which PyTorch's own code reads, e.g.
  // DTensor's OffsetBasedRNGTracker).
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;
  void set_state(const c10::TensorImpl& new_state) override;

  // (seed, first counter) for @n elements; the offset moves past them.
  // The caller holds mutex_.
  std::pair<uint64_t, uint64_t> reserve(uint64_t n);

  static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }
  static constexpr size_t kStateSize = 16;

 private:
  NeuronGeneratorImpl* clone_impl() const override;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// The default generator of card @index (-1: the current card).
const at::Generator& default_generator(c10::DeviceIndex index);

// @gen if given (it must be a neuron generator), else @t's card's default.
NeuronGeneratorImpl* generator_for(const std::optional<at::Generator>& gen,
                                   c10::DeviceIndex index);

}  // namespace torch_neuron
