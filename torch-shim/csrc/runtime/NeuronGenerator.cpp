// SPDX-License-Identifier: MIT
// The neuron generator (NeuronGenerator.h): one default per card, the
// torch.Generator(device="neuron") factory, and the torch.ops.neuron calls
// behind torch.neuron.manual_seed, get_rng_state, ...
#include "NeuronGenerator.h"

#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <memory>
#include <mutex>
#include <vector>

#include "../NeuronHelpers.h"

namespace torch_neuron {
namespace {

void put_le(uint8_t* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; i++)
    p[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t get_le(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++)
    v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

c10::DeviceIndex resolve(c10::DeviceIndex index) {
  return checked_index(index < 0 ? current_device() : index);
}

} // namespace

NeuronGeneratorImpl::NeuronGeneratorImpl(c10::DeviceIndex index, uint64_t seed)
    : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, index),
                         c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      seed_(seed) {}

void NeuronGeneratorImpl::set_current_seed(uint64_t seed) {
  seed_ = seed;
  offset_ = 0;
}

uint64_t NeuronGeneratorImpl::current_seed() const { return seed_; }

uint64_t NeuronGeneratorImpl::seed() {
  uint64_t s = c10::detail::getNonDeterministicRandom();
  set_current_seed(s);
  return s;
}

void NeuronGeneratorImpl::set_offset(uint64_t offset) { offset_ = offset; }

uint64_t NeuronGeneratorImpl::get_offset() const { return offset_; }

c10::intrusive_ptr<c10::TensorImpl> NeuronGeneratorImpl::get_state() const {
  at::Tensor state = at::empty({static_cast<int64_t>(kStateSize)},
                               at::TensorOptions().dtype(at::kByte));
  uint8_t* p = state.data_ptr<uint8_t>();
  put_le(p, seed_, 8);
  put_le(p + 8, offset_, 8);
  return state.getIntrusivePtr();
}

void NeuronGeneratorImpl::set_state(const c10::TensorImpl& new_state) {
  at::detail::check_rng_state(new_state);
  TORCH_CHECK(new_state.numel() == static_cast<int64_t>(kStateSize),
              "neuron: a neuron generator's RNG state is ", kStateSize,
              " bytes, got ", new_state.numel(), " (a state of another "
              "device's generator?)");
  const uint8_t* p = new_state.data_dtype_initialized<uint8_t>();
  seed_ = get_le(p, 8);
  offset_ = get_le(p + 8, 8);
}

std::pair<uint64_t, uint64_t> NeuronGeneratorImpl::reserve(uint64_t n) {
  uint64_t first = offset_;
  offset_ += n;  // Philox counters wrap modulo 2^64
  return {seed_, first};
}

NeuronGeneratorImpl* NeuronGeneratorImpl::clone_impl() const {
  auto* g = new NeuronGeneratorImpl(device_.index(), seed_);
  g->offset_ = offset_;
  return g;
}

const at::Generator& default_generator(c10::DeviceIndex index) {
  static const c10::DeviceIndex count = device_count();
  static std::vector<at::Generator> gens(count);
  static std::unique_ptr<std::once_flag[]> once(new std::once_flag[count]);
  c10::DeviceIndex i = resolve(index);
  std::call_once(once[i], [i] {
    gens[i] = at::make_generator<NeuronGeneratorImpl>(i);
  });
  return gens[i];
}

NeuronGeneratorImpl* generator_for(const std::optional<at::Generator>& gen,
                                   c10::DeviceIndex index) {
  return at::get_generator_or_default<NeuronGeneratorImpl>(
      gen, default_generator(index));
}

namespace {

// torch.Generator(device="neuron[:N]")
at::Generator make_neuron_generator(c10::DeviceIndex index) {
  return at::make_generator<NeuronGeneratorImpl>(resolve(index));
}

REGISTER_GENERATOR_PRIVATEUSE1(make_neuron_generator)

NeuronGeneratorImpl* default_impl(int64_t index) {
  return default_generator(checked_index(index)).get<NeuronGeneratorImpl>();
}

// Seeds cross as int64 (the schema's int): the same 64 bits.
void rng_manual_seed(int64_t index, int64_t seed) {
  NeuronGeneratorImpl* g = default_impl(index);
  std::lock_guard<std::mutex> lock(g->mutex_);
  g->set_current_seed(static_cast<uint64_t>(seed));
}

int64_t rng_seed(int64_t index) {
  NeuronGeneratorImpl* g = default_impl(index);
  std::lock_guard<std::mutex> lock(g->mutex_);
  return static_cast<int64_t>(g->seed());
}

int64_t rng_initial_seed(int64_t index) {
  NeuronGeneratorImpl* g = default_impl(index);
  std::lock_guard<std::mutex> lock(g->mutex_);
  return static_cast<int64_t>(g->current_seed());
}

at::Tensor rng_get_state(int64_t index) {
  NeuronGeneratorImpl* g = default_impl(index);
  std::lock_guard<std::mutex> lock(g->mutex_);
  return at::Tensor(g->get_state());
}

void rng_set_state(int64_t index, const at::Tensor& state) {
  TORCH_CHECK(state.defined(), "neuron: set_rng_state needs a state tensor");
  NeuronGeneratorImpl* g = default_impl(index);
  std::lock_guard<std::mutex> lock(g->mutex_);
  g->set_state(*state.unsafeGetTensorImpl());
}

at::Generator rng_default_generator(int64_t index) {
  return default_generator(checked_index(index));
}

} // namespace
} // namespace torch_neuron

TORCH_LIBRARY_FRAGMENT(neuron, m) {
  m.def("rng_manual_seed(int index, int seed) -> ()", &torch_neuron::rng_manual_seed);
  m.def("rng_seed(int index) -> int", &torch_neuron::rng_seed);
  m.def("rng_initial_seed(int index) -> int", &torch_neuron::rng_initial_seed);
  m.def("rng_get_state(int index) -> Tensor", &torch_neuron::rng_get_state);
  m.def("rng_set_state(int index, Tensor state) -> ()", &torch_neuron::rng_set_state);
  m.def("default_generator(int index) -> Generator?", &torch_neuron::rng_default_generator);
}
