// SPDX-License-Identifier: MIT
// Random numbers drawn on the card: NISA_INSN_RANDOM (uniform, normal or
// raw bits from the generator's Philox counters), shaped into each
// distribution by the card's elementwise instructions -- the host only
// works out the operations' constants. Behind torch.rand, randn, randint,
// *_like, bernoulli, dropout, Tensor.uniform_, normal_, random_, ...; and
// randperm and multinomial, which sort or scan such draws on the card.
#include <ATen/MemoryOverlap.h>

#include <cmath>
#include <limits>
#include <mutex>

#include "NeuronOps.h"
#include "NeuronSort.h"
#include "../runtime/NeuronGenerator.h"

namespace torch_neuron {
namespace {

using Gen = std::optional<at::Generator>;

// Fill @dst (any strides; element i in row-major order takes counter
// offset + i) from @gen, or from the default generator of dst's card.
void draw(nisa_random dist, const at::Tensor& dst, const Gen& gen) {
  uint64_t n = static_cast<uint64_t>(dst.numel());
  if (n == 0)
    return;
  NeuronGeneratorImpl* g = generator_for(gen, dst.device().index());
  std::pair<uint64_t, uint64_t> key;
  {
    std::lock_guard<std::mutex> lock(g->mutex_);
    key = g->reserve(n);
  }
  nrn_tensor_desc d = desc(dst);
  NEURON_OP(nrn_op_random(stream_for(dst), dist, &d, key.first, key.second));
}

// dst = a op v (or v op a with @reverse), on the card.
void scalar_op(nisa_binary op, const at::Tensor& dst, const at::Tensor& a,
               double v, bool reverse = false) {
  nrn_tensor_desc o = desc(dst), x = desc(a);
  NEURON_OP(nrn_op_binary_scalar(stream_for(dst), op, &o, &x, v, 1.0, reverse));
}

void unary_op(nisa_unary fn, const at::Tensor& dst, const at::Tensor& a) {
  nrn_tensor_desc o = desc(dst), x = desc(a);
  NEURON_OP(nrn_op_unary(stream_for(dst), fn, &o, &x));
}

void copy_op(const at::Tensor& dst, const at::Tensor& src) {
  nrn_tensor_desc o = desc(dst), x = desc(src);
  NEURON_OP(nrn_op_copy(stream_for(dst), &o, &x));
}

bool is_float(const at::Tensor& t) {
  return card_float(t.scalar_type());
}

// In-place random ops write every element once: a tensor whose elements
// share memory (an expanded one) is refused, as on the CPU.
void check_inplace(const at::Tensor& self, const char* op, bool floating_only) {
  TORCH_CHECK(is_neuron(self), "neuron: ", op, " expects a neuron tensor");
  TORCH_CHECK(is_float(self) || (!floating_only && supported_dtype(self.scalar_type())),
              "neuron: ", op, " is not supported for dtype ", self.scalar_type(),
              " on the card (", card_dtype_names(floating_only), ")");
  at::assert_no_internal_overlap(self);
}

double dtype_max(at::ScalarType t) {
  return t == at::kBFloat16 ? static_cast<double>(std::numeric_limits<c10::BFloat16>::max())
         : t == at::kHalf   ? static_cast<double>(std::numeric_limits<c10::Half>::max())
         : t == at::kDouble ? std::numeric_limits<double>::max()
                            : static_cast<double>(std::numeric_limits<float>::max());
}

// The largest value of 16-bit float type T below @v.
template <typename T>
double below16(double v) {
  T b(static_cast<float>(v));
  if (static_cast<double>(static_cast<float>(b)) < v)
    return static_cast<float>(b);
  uint16_t x = b.x;
  x = (x & 0x7fff) == 0 ? 0x8001 : (x & 0x8000) ? x + 1 : x - 1;
  return static_cast<float>(T(x, T::from_bits()));
}

// The largest value of float dtype @t below @v (for [from, to) ranges).
double below(double v, at::ScalarType t) {
  if (t == at::kDouble)
    return std::nextafter(v, -INFINITY);
  if (t == at::kFloat) {
    float f = static_cast<float>(v);
    return static_cast<double>(f) < v ? f : std::nextafter(f, -INFINITY);
  }
  return t == at::kHalf ? below16<c10::Half>(v) : below16<c10::BFloat16>(v);
}

at::Tensor& uniform_(at::Tensor& self, double from, double to, Gen gen) {
  // A complex64 tensor: both parts drawn from [from, to), as on the CPU.
  if (self.is_complex()) {
    at::Tensor planes = at::view_as_real(self);
    uniform_(planes, from, to, gen);
    return self;
  }
  check_inplace(self, "uniform_", true);
  TORCH_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but "
              "found from=", from, " > to=", to);
  TORCH_CHECK(std::isfinite(from) && std::isfinite(to) &&
              to - from <= dtype_max(self.scalar_type()), "uniform_ expects "
              "to-from <= std::numeric_limits<", self.scalar_type(), ">::max(), "
              "but found to=", to, " and from=", from, " which result in to-from "
              "to exceed the limit");
  draw(NISA_RNG_UNIFORM, self, gen);
  if (self.numel() == 0 || (from == 0.0 && to == 1.0))
    return self;  // already [0, 1) at self's precision
  scalar_op(NISA_BIN_MUL, self, self, to - from);
  scalar_op(NISA_BIN_ADD, self, self, from);
  // rounding may reach @to: keep the range half-open
  if (to > from)
    scalar_op(NISA_BIN_MIN, self, self, below(to, self.scalar_type()));
  return self;
}

at::Tensor& normal_(at::Tensor& self, double mean, double std, Gen gen) {
  // A complex64 tensor: each part normal of deviation std / sqrt(2) (so
  // that E|z - mean|^2 = std^2), as on the CPU.
  if (self.is_complex()) {
    at::Tensor planes = at::view_as_real(self);
    normal_(planes, mean, std / std::sqrt(2.0), gen);
    return self;
  }
  check_inplace(self, "normal_", true);
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  draw(NISA_RNG_NORMAL, self, gen);
  if (self.numel() == 0)
    return self;
  if (std != 1.0)
    scalar_op(NISA_BIN_MUL, self, self, std);
  if (mean != 0.0)
    scalar_op(NISA_BIN_ADD, self, self, mean);
  return self;
}

// ---- normal with tensor mean and/or std: N(0, 1) * std + mean ----

void check_std(const at::Tensor& std) {
  TORCH_CHECK(std.numel() == 0 || std.amin().item<double>() >= 0.0,
              "normal expects all elements of std >= 0.0");
}

at::Tensor& normal_tf_out(const at::Tensor& mean, double std, Gen gen, at::Tensor& out) {
  TORCH_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  resize_out(out, mean.sizes());
  normal_(out, 0.0, std, gen);
  return out.add_(mean);
}
at::Tensor normal_tf(const at::Tensor& mean, double std, Gen gen) {
  at::Tensor out = at::empty_like(mean, at::MemoryFormat::Contiguous);
  return normal_tf_out(mean, std, gen, out);
}
at::Tensor& normal_ft_out(double mean, const at::Tensor& std, Gen gen, at::Tensor& out) {
  check_std(std);
  resize_out(out, std.sizes());
  normal_(out, 0.0, 1.0, gen);
  return out.mul_(std).add_(mean);
}
at::Tensor normal_ft(double mean, const at::Tensor& std, Gen gen) {
  at::Tensor out = at::empty_like(std, at::MemoryFormat::Contiguous);
  return normal_ft_out(mean, std, gen, out);
}
at::Tensor& normal_tt_out(const at::Tensor& mean, const at::Tensor& std, Gen gen,
                          at::Tensor& out) {
  check_std(std);
  resize_out(out, at::infer_size(mean.sizes(), std.sizes()));
  normal_(out, 0.0, 1.0, gen);
  return out.mul_(std).add_(mean);
}
at::Tensor normal_tt(const at::Tensor& mean, const at::Tensor& std, Gen gen) {
  at::Tensor out = at::empty({0}, mean.options());
  return normal_tt_out(mean, std, gen, out);
}

// ---- random_: integers of [from, from + range) ----

// v as an exact double (integers up to 2^53, and -2^63)
bool exact_in_double(int64_t v) {
  return (v >= -(int64_t{1} << 53) && v <= (int64_t{1} << 53)) ||
         v == std::numeric_limits<int64_t>::min();
}

// dst = a op v on int64 tensors, exactly: the card computes integer
// instructions on int64 when the scalar is an integer; a scalar that a
// double cannot carry goes as a 0-dim tensor.
void int_op(nisa_binary op, const at::Tensor& dst, const at::Tensor& a, int64_t v) {
  if (exact_in_double(v)) {
    scalar_op(op, dst, a, static_cast<double>(v));
    return;
  }
  at::Tensor t = empty_neuron({}, at::kLong, dst.device());
  t.copy_(at::scalar_tensor(v, at::TensorOptions().dtype(at::kLong)));
  nrn_tensor_desc o = desc(dst), x = desc(a), y = desc(t);
  NEURON_OP(nrn_op_binary(stream_for(dst), op, &o, &x, &y, 1.0));
}

void int_compare(nisa_compare cmp, const at::Tensor& dst, const at::Tensor& a, int64_t v) {
  at::Tensor t = empty_neuron({}, at::kLong, dst.device());
  t.copy_(at::scalar_tensor(v, at::TensorOptions().dtype(at::kLong)));
  nrn_tensor_desc o = desc(dst), x = desc(a), y = desc(t);
  NEURON_OP(nrn_op_compare(stream_for(dst), cmp, &o, &x, &y));
}

// self = from + (random 64 bits mod range); range 0 means 2^64.
void random_range(at::Tensor& self, int64_t from, uint64_t range, const Gen& gen) {
  constexpr uint64_t kHalf = uint64_t{1} << 63;
  if (self.numel() == 0)
    return;
  bool direct = self.scalar_type() == at::kLong;
  at::Tensor v = direct ? self : empty_neuron(self.sizes(), at::kLong, self.device());
  draw(NISA_RNG_BITS, v, gen);
  if (range != 0 && range < kHalf) {
    int_op(NISA_BIN_REM, v, v, static_cast<int64_t>(range));  // in [0, range)
  } else if (range == kHalf) {
    int_op(NISA_BIN_AND, v, v, std::numeric_limits<int64_t>::max());
  } else if (range != 0) {
    // 2^63 < range < 2^64: u (v's bits unsigned) < 2 * range, so u mod range
    // is u or u - range; u >= range compares as signed after flipping the
    // top bits of both.
    at::Tensor flipped = empty_neuron(v.sizes(), at::kLong, v.device());
    at::Tensor ge = empty_neuron(v.sizes(), at::kBool, v.device());
    at::Tensor less = empty_neuron(v.sizes(), at::kLong, v.device());
    int_op(NISA_BIN_XOR, flipped, v, std::numeric_limits<int64_t>::min());
    int_compare(NISA_CMP_GE, ge, flipped, static_cast<int64_t>(range - kHalf));
    int_op(NISA_BIN_SUB, less, v, static_cast<int64_t>(range));  // wraps
    nrn_tensor_desc dv = desc(v), dg = desc(ge), dl = desc(less);
    NEURON_OP(nrn_op_where(stream_for(v), &dv, &dg, &dl, &dv));
  }
  if (from != 0)
    int_op(NISA_BIN_ADD, v, v, from);  // wraps only for range 2^64
  if (!direct)
    copy_op(self, v);
}

// The integers random_ may produce for self's dtype: [lo, hi].
std::pair<int64_t, int64_t> random_bounds(const at::Tensor& self) {
  switch (self.scalar_type()) {
    case at::kBool: return {0, 1};
    case at::kByte: return {0, 255};
    case at::kChar: return {-128, 127};
    case at::kShort: return {std::numeric_limits<int16_t>::min(),
                             std::numeric_limits<int16_t>::max()};
    case at::kInt: return {std::numeric_limits<int32_t>::min(),
                           std::numeric_limits<int32_t>::max()};
    case at::kLong: return {std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max()};
    default: {
      // floats: the integers the dtype holds exactly (the CPU warns and
      // rounds beyond them; the card refuses)
      at::ScalarType t = self.scalar_type();
      int64_t m = int64_t{1} << (t == at::kDouble ? 53 : t == at::kFloat ? 24
                                 : t == at::kHalf ? 11 : 8);
      return {-m, m};
    }
  }
}

void check_bounds(const at::Tensor& self, int64_t from, int64_t to_inc) {
  auto [lo, hi] = random_bounds(self);
  TORCH_CHECK(from >= lo && from <= hi, "random_: from=", from, " is out of "
              "bounds for ", self.scalar_type(), is_float(self) ?
              " on neuron (integers beyond 2^mantissa are not exact)" : "");
  TORCH_CHECK(to_inc >= lo && to_inc <= hi, "random_: to - 1=", to_inc,
              " is out of bounds for ", self.scalar_type(), is_float(self) ?
              " on neuron (integers beyond 2^mantissa are not exact)" : "");
}

at::Tensor& random_from(at::Tensor& self, int64_t from, std::optional<int64_t> to,
                        Gen gen) {
  check_inplace(self, "random_", false);
  int64_t to_inc;
  if (to) {
    TORCH_CHECK(from < *to, "random_ expects 'from' to be less than 'to', but "
                "got from=", from, " >= to=", *to);
    to_inc = *to - 1;
  } else {
    to_inc = random_bounds(self).second;
    TORCH_CHECK(from <= to_inc, "random_ expects 'from' casted to dtype to be "
                "less than or equal to 'to_inc' casted to dtype, but got from=",
                from, " > to_inc=", to_inc);
  }
  check_bounds(self, from, to_inc);
  uint64_t range = static_cast<uint64_t>(to_inc) - static_cast<uint64_t>(from) + 1;
  random_range(self, from, range, gen);
  return self;
}

at::Tensor& random_to(at::Tensor& self, int64_t to, Gen gen) {
  return random_from(self, 0, to, gen);
}

// Without bounds: [0, max] for integers, [0, 2^mantissa] for floats.
at::Tensor& random_full(at::Tensor& self, Gen gen) {
  return random_from(self, 0, std::nullopt, gen);
}

// ---- bernoulli: u < p with u uniform in [0, 1) ----

// u of @self's shape, in float32 (24 random bits), or in float64 (53) when
// @wide: self or p is float64.
at::Tensor uniform_like(const at::Tensor& self, bool wide, const Gen& gen) {
  at::Tensor u = empty_neuron(self.sizes(), wide ? at::kDouble : at::kFloat, self.device());
  draw(NISA_RNG_UNIFORM, u, gen);
  return u;
}

at::Tensor& bernoulli_float_(at::Tensor& self, double p, Gen gen) {
  check_inplace(self, "bernoulli_", false);
  TORCH_CHECK(p >= 0 && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  if (self.numel() == 0)
    return self;
  at::Tensor u = uniform_like(self, self.scalar_type() == at::kDouble, gen);
  nrn_tensor_desc o = desc(self), du = desc(u);
  NEURON_OP(nrn_op_compare_scalar(stream_for(self), NISA_CMP_LT, &o, &du, p));
  return self;
}

at::Tensor& bernoulli_tensor_(at::Tensor& self, const at::Tensor& p_, Gen gen) {
  check_inplace(self, "bernoulli_", false);
  TORCH_CHECK(at::infer_size(self.sizes(), p_.sizes()) == self.sizes(),
              "bernoulli_: p of shape ", p_.sizes(), " does not broadcast to ",
              self.sizes());
  if (self.numel() == 0)
    return self;
  at::Tensor p = p_.to(self.device());
  TORCH_CHECK(p.amin().item<double>() >= 0.0 && p.amax().item<double>() <= 1.0,
              "bernoulli_ expects all elements of p to be in [0, 1]");
  at::Tensor u = uniform_like(self, self.scalar_type() == at::kDouble ||
                                        p.scalar_type() == at::kDouble, gen);
  nrn_tensor_desc o = desc(self), du = desc(u), dp = desc(p);
  NEURON_OP(nrn_op_compare(stream_for(self), NISA_CMP_LT, &o, &du, &dp));
  return self;
}

at::Tensor& bernoulli_out(const at::Tensor& p, Gen gen, at::Tensor& out) {
  resize_out(out, p.sizes());
  return bernoulli_tensor_(out, p, gen);
}

// ---- distributions shaped from u in [0, 1) ----

// -log(1 - u) / lambda
at::Tensor& exponential_(at::Tensor& self, double lambd, Gen gen) {
  check_inplace(self, "exponential_", true);
  TORCH_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  draw(NISA_RNG_UNIFORM, self, gen);
  if (self.numel() == 0)
    return self;
  scalar_op(NISA_BIN_SUB, self, self, 1.0, true);  // 1 - u, in (0, 1]
  unary_op(NISA_UN_LOG, self, self);
  scalar_op(NISA_BIN_MUL, self, self, -1.0 / lambd);
  return self;
}

at::Tensor& log_normal_(at::Tensor& self, double mean, double std, Gen gen) {
  TORCH_CHECK(std > 0.0, "log_normal_ expects std > 0.0, but found std=", std);
  normal_(self, mean, std, gen);
  if (self.numel() != 0)
    unary_op(NISA_UN_EXP, self, self);
  return self;
}

// ceil(log(1 - u) / log(1 - p)), at least 1: the trials up to a success
at::Tensor& geometric_(at::Tensor& self, double p, Gen gen) {
  check_inplace(self, "geometric_", false);
  TORCH_CHECK(p > 0 && p < 1, "geometric_ expects p to be in (0, 1), but got p=", p);
  if (self.numel() == 0)
    return self;
  at::ScalarType acc = acc_dtype(self.scalar_type());
  bool direct = self.scalar_type() == acc;
  at::Tensor w = direct ? self : empty_neuron(self.sizes(), acc, self.device());
  draw(NISA_RNG_UNIFORM, w, gen);
  scalar_op(NISA_BIN_SUB, w, w, 1.0, true);
  unary_op(NISA_UN_LOG, w, w);
  scalar_op(NISA_BIN_DIV, w, w, std::log1p(-p));
  unary_op(NISA_UN_NEG, w, w);  // ceil(x) = -floor(-x)
  unary_op(NISA_UN_FLOOR, w, w);
  unary_op(NISA_UN_NEG, w, w);
  scalar_op(NISA_BIN_MAX, w, w, 1.0);  // u = 0 gives 0: the limit is 1
  if (!direct)
    copy_op(self, w);
  return self;
}

// median + sigma * tan(pi * (u - 1/2))
at::Tensor& cauchy_(at::Tensor& self, double median, double sigma, Gen gen) {
  check_inplace(self, "cauchy_", true);
  TORCH_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  if (self.numel() == 0)
    return self;
  at::ScalarType acc = acc_dtype(self.scalar_type());
  at::Tensor w = empty_neuron(self.sizes(), acc, self.device());
  draw(NISA_RNG_UNIFORM, w, gen);
  at::Tensor s = empty_neuron(self.sizes(), acc, self.device());
  scalar_op(NISA_BIN_SUB, w, w, 0.5);
  scalar_op(NISA_BIN_MUL, w, w, 3.14159265358979323846);
  unary_op(NISA_UN_SIN, s, w);
  unary_op(NISA_UN_COS, w, w);
  nrn_tensor_desc dw = desc(w), ds = desc(s);
  NEURON_OP(nrn_op_binary(stream_for(w), NISA_BIN_DIV, &dw, &ds, &dw, 1.0));
  scalar_op(NISA_BIN_MUL, w, w, sigma);
  scalar_op(NISA_BIN_ADD, self, w, median);
  return self;
}

// ---- random permutations and draws ----

// randperm: sort 64-bit random keys drawn on the card; the order is the permutation.
at::Tensor& randperm_gen_out(int64_t n, Gen gen, at::Tensor& out) {
  TORCH_CHECK(n >= 0, "n must be non-negative, got", n);
  resize_out(out, {n});
  if (n == 0)
    return out;
  at::Tensor keys = empty_neuron({n}, at::kLong, out.device());
  keys.random_(gen);
  return out.copy_(std::get<1>(sort_stable(keys, 0, false)));
}
at::Tensor& randperm_out(int64_t n, at::Tensor& out) {
  return randperm_gen_out(n, std::nullopt, out);
}
at::Tensor randperm_gen(int64_t n, Gen gen, std::optional<at::ScalarType> dtype,
                        std::optional<at::Layout>, std::optional<at::Device> device,
                        std::optional<bool>) {
  at::Tensor out = empty_neuron({0}, dtype.value_or(at::kLong),
                                device.value_or(at::Device(c10::DeviceType::PrivateUse1)));
  return randperm_gen_out(n, gen, out);
}
at::Tensor randperm(int64_t n, std::optional<at::ScalarType> dtype,
                    std::optional<at::Layout> layout, std::optional<at::Device> device,
                    std::optional<bool> pin) {
  return randperm_gen(n, std::nullopt, dtype, layout, device, pin);
}

// multinomial: with replacement, u * total searched in the cumulative sums;
// without, the largest p / E with E ~ Exp(1) (the exponential race), both
// drawn and computed on the card. The checks read back three scalars.
at::Tensor multinomial(const at::Tensor& self, int64_t num_samples, bool replacement, Gen gen) {
  TORCH_CHECK(self.dim() == 1 || self.dim() == 2, "prob_dist must be 1 or 2 dim");
  TORCH_CHECK(card_float(self.scalar_type()), "multinomial only supports floating-point "
              "dtypes for input, got: ", self.scalar_type());
  TORCH_CHECK(num_samples > 0, "cannot sample n_sample <= 0 samples");
  int64_t n = self.size(-1);
  TORCH_CHECK(replacement || num_samples <= n, "cannot sample n_sample > prob_dist.size(-1) "
              "samples without replacement");
  at::Tensor p = self.dim() == 1 ? self.unsqueeze(0) : self;
  int64_t rows = p.size(0);
  at::Tensor out = empty_neuron({rows, num_samples}, at::kLong, self.device());
  if (rows == 0)
    return self.dim() == 1 ? out.squeeze(0) : out;
  at::ScalarType acc = acc_dtype(p.scalar_type());
  at::Tensor pf = p.to(acc);
  at::Tensor bad = at::logical_or(at::logical_not(at::isfinite(pf)), pf.lt(0)).any();
  TORCH_CHECK(!bad.item<bool>(), "probability tensor contains either `inf`, `nan` or element < 0");
  at::Tensor nonzero_per_row = pf.gt(0).sum(1, false, at::kLong);
  TORCH_CHECK(at::amin(nonzero_per_row, {0}).item<int64_t>() > 0,
              "invalid multinomial distribution (sum of probabilities <= 0)");
  if (replacement) {
    at::Tensor cdf = scan(NISA_SCAN_SUM, pf, 1, acc);
    at::Tensor total = cdf.narrow(1, n - 1, 1);
    at::Tensor u = at::empty({rows, num_samples}, pf.options());
    u.uniform_(0, 1, gen);
    u.mul_(total);
    // #(cdf[j] <= u) over j < n - 1: the first j whose cdf exceeds u.
    at::Tensor head = cdf.narrow(1, 0, n - 1).unsqueeze(1);
    out.copy_(at::le(head, u.unsqueeze(2)).sum(2, false, at::kLong));
  } else {
    TORCH_CHECK(at::amin(nonzero_per_row, {0}).item<int64_t>() >= num_samples,
                "invalid multinomial distribution (with replacement=False, not enough "
                "non-negative category to sample)");
    at::Tensor e = at::empty({rows, n}, pf.options());
    e.exponential_(1, gen);
    at::Tensor keys = pf.div(e);
    auto sorted = sort_stable(keys, 1, true);
    out.copy_(std::get<1>(sorted).narrow(1, 0, num_samples));
  }
  return self.dim() == 1 ? out.squeeze(0) : out;
}
at::Tensor& multinomial_out(const at::Tensor& self, int64_t num_samples, bool replacement,
                            Gen gen, at::Tensor& out) {
  at::Tensor r = torch_neuron::multinomial(self, num_samples, replacement, gen);
  return into(out, r);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("uniform_", uniform_);
  m.impl("normal_", normal_);
  m.impl("normal.Tensor_float", normal_tf);
  m.impl("normal.Tensor_float_out", normal_tf_out);
  m.impl("normal.float_Tensor", normal_ft);
  m.impl("normal.float_Tensor_out", normal_ft_out);
  m.impl("normal.Tensor_Tensor", normal_tt);
  m.impl("normal.Tensor_Tensor_out", normal_tt_out);
  m.impl("random_.from", random_from);
  m.impl("random_.to", random_to);
  m.impl("random_", random_full);
  m.impl("bernoulli_.float", bernoulli_float_);
  m.impl("bernoulli_.Tensor", bernoulli_tensor_);
  m.impl("bernoulli.out", bernoulli_out);
  m.impl("exponential_", exponential_);
  m.impl("log_normal_", log_normal_);
  m.impl("geometric_", geometric_);
  m.impl("cauchy_", cauchy_);
  m.impl("randperm", randperm);
  m.impl("randperm.generator", randperm_gen);
  m.impl("randperm.out", randperm_out);
  m.impl("randperm.generator_out", randperm_gen_out);
  m.impl("multinomial", multinomial);
  m.impl("multinomial.out", multinomial_out);
}

}  // namespace torch_neuron
