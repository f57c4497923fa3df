// SPDX-License-Identifier: MIT
// Neuron storages shared between processes (torch_neuron/multiprocessing.py,
// docs/multiprocessing.md), and the refusal of the cards in a forked child.
//
// Export: the storage's segment (a libneuron buffer of the caching
// allocator) leaves as a dma-buf descriptor, with the storage's offset in
// it and size. The receiver imports it on the same card (the same memory:
// libneuron returns the buffer it may already have for it) and wraps the
// bytes in a storage of its own that is not resizable.
//
// Lifetime, as CUDA's IPC: each export counts one reference in a slot of a
// shared counter file of the exporting process (a memfd sent beside the
// dma-buf); the receiver's storage gives it back when freed, after waiting
// for the work of its card. Until the slot is back at zero, the exporter
// keeps its storage -- so its allocator cannot hand the block to another
// tensor while another process may still use it. Exports and
// ipc_collect() drop the storages whose slots are at zero. The card's
// memory itself lives as long as any process holds a dma-buf or an import
// of it (the driver counts those), exporter gone or not.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <torch/library.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "NeuronIpc.h"
#include "NeuronStream.h"

namespace torch_neuron {

bool in_bad_fork() noexcept {
  return nrn_forked() != 0;
}

void check_not_forked() {
  TORCH_CHECK(!nrn_forked(), "neuron: cannot use the neuron device in a "
              "process forked from one that had already used it (its device "
              "file, mappings and locks are the parent's). To use neuron in "
              "subprocesses, start them with the 'spawn' or 'forkserver' "
              "method: multiprocessing.get_context('spawn'), "
              "torch.multiprocessing.set_start_method('spawn'), or "
              "DataLoader(..., multiprocessing_context='spawn')");
}

namespace {

using Counter = std::atomic<int64_t>;
static_assert(sizeof(Counter) == sizeof(int64_t), "a counter is 8 bytes");

// Slots of the counter file: its pages exist once touched.
constexpr int64_t kSlots = 1 << 20;

// The exporter's side, under g_lock.
struct Sent {
  c10::Storage storage;  // kept from the allocator while shared
  int64_t slot;
};

std::mutex g_lock;
int g_counter_fd = -1;
Counter* g_counters = nullptr;
std::vector<int64_t> g_free_slots;
int64_t g_next_slot = 0;
std::unordered_map<const c10::StorageImpl*, Sent> g_sent;
// The receiver's side: the counter files mapped, by (device, inode).
std::map<std::pair<dev_t, ino_t>, Counter*> g_mapped;

[[noreturn]] void refuse(const at::Tensor& t, const std::string& why) {
  TORCH_CHECK(false, "neuron: cannot share this ", t.device(), " tensor with "
              "another process: ", why);
}

Counter* counters_locked() {
  if (g_counters)
    return g_counters;
  int fd = memfd_create("neuron-ipc-refs", MFD_CLOEXEC);
  TORCH_CHECK(fd >= 0, "neuron: memfd_create of the shared reference "
              "counters failed: ", strerror(errno));
  void* p = MAP_FAILED;
  if (ftruncate(fd, kSlots * sizeof(Counter)) == 0)
    p = mmap(nullptr, kSlots * sizeof(Counter), PROT_READ | PROT_WRITE,
             MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    int err = errno;
    close(fd);
    TORCH_CHECK(false, "neuron: mapping the shared reference counters "
                "failed: ", strerror(err));
  }
  g_counter_fd = fd;
  g_counters = static_cast<Counter*>(p);
  return g_counters;
}

// Drop the storages no other process holds any more; how many are left.
int64_t collect_locked() {
  for (auto it = g_sent.begin(); it != g_sent.end();) {
    if (g_counters[it->second.slot].load(std::memory_order_acquire) == 0) {
      g_free_slots.push_back(it->second.slot);
      it = g_sent.erase(it);  // may give the block back to the allocator
    } else {
      ++it;
    }
  }
  return static_cast<int64_t>(g_sent.size());
}

// The counter file behind @fd, mapped once per process.
Counter* counters_of(int64_t fd) {
  struct stat st;
  TORCH_CHECK(fstat(static_cast<int>(fd), &st) == 0, "neuron: a shared "
              "tensor's reference counters: fstat: ", strerror(errno));
  TORCH_CHECK(st.st_size >= static_cast<off_t>(kSlots * sizeof(Counter)),
              "neuron: a shared tensor's reference counter file is too small");
  std::lock_guard<std::mutex> guard(g_lock);
  auto key = std::make_pair(st.st_dev, st.st_ino);
  auto it = g_mapped.find(key);
  if (it != g_mapped.end())
    return it->second;
  void* p = mmap(nullptr, kSlots * sizeof(Counter), PROT_READ | PROT_WRITE,
                 MAP_SHARED, static_cast<int>(fd), 0);
  TORCH_CHECK(p != MAP_FAILED, "neuron: mapping a shared tensor's reference "
              "counters failed: ", strerror(errno));
  return g_mapped[key] = static_cast<Counter*>(p);
}

Counter* slot_of(int64_t fd, int64_t slot) {
  TORCH_CHECK(slot >= 0 && slot < kSlots, "neuron: a shared tensor's "
              "reference counter slot ", slot, " is out of range");
  return counters_of(fd) + slot;
}

// A storage imported from another process (the DataPtr's context).
struct Imported {
  nrn_buffer* buf;
  uint64_t offset;
  Counter* counter;
  c10::DeviceIndex device;
  pid_t pid;
};

void ipc_free(void* ctx) {
  auto* im = static_cast<Imported*>(ctx);
  // A forked child's copy: the parent's reference, not ours to give back.
  if (getpid() != im->pid)
    return;
  // The exporter may reuse the block once the count is back: wait for
  // this card's work (which may still use it) first.
  try {
    synchronize_device(im->device);
  } catch (const std::exception&) {
    // The work failed or the card is gone: it no longer uses the block.
  }
  nrn_buffer_free(im->buf);
  im->counter->fetch_sub(1, std::memory_order_acq_rel);
  delete im;
}

// The index of the card whose accel minor is @minor in this process.
c10::DeviceIndex card_of_minor(int64_t minor) {
  for (c10::DeviceIndex i = 0; i < device_count(); i++) {
    struct nrn_device_info info{};
    NEURON_CHECK(nrn_device_info(device(i), &info));
    if (static_cast<int64_t>(info.minor) == minor)
      return i;
  }
  TORCH_CHECK(false, "neuron: the shared tensor is on the card "
              "/dev/accel/accel", minor, ", which this process does not have "
              "(it sees ", static_cast<int>(device_count()), " neuron cards)");
}

// [dma-buf fd, counter fd, slot, offset, nbytes, accel minor] of @self's
// storage; the caller closes the dma-buf fd (the counter fd is the
// process's).
std::vector<int64_t> ipc_export(const at::Tensor& self) {
  TORCH_CHECK(self.device().type() == c10::DeviceType::PrivateUse1,
              "neuron: ipc_export of a tensor on ", self.device());
  check_not_forked();
  const c10::Storage& storage = self.storage();
  if (!storage.data_ptr().get() && storage.nbytes() == 0)
    refuse(self, "an empty storage (send it as such)");
  DeviceSpan span{nullptr, 0};
  try {
    span = storage_span(storage);
  } catch (const c10::Error& e) {
    refuse(self, e.what_without_backtrace());
  }
  if (!span.buf || nrn_buffer_mem(span.buf) != NRN_MEM_DEVICE)
    refuse(self, "its storage is not device memory of the neuron allocator");
  const c10::DeviceIndex index = self.device().index();
  struct nrn_device_info info{};
  NEURON_CHECK(nrn_device_info(device(index), &info));
  // The receiver reads what was issued before the send.
  synchronize_device(index);
  int fd = -1;
  int err = nrn_buffer_export(span.buf, &fd);
  if (err < 0)
    refuse(self, std::string("exporting its memory as a dma-buf failed: ") +
           nrn_strerror(err));
  std::lock_guard<std::mutex> guard(g_lock);
  try {
    Counter* counters = counters_locked();
    collect_locked();
    auto it = g_sent.find(storage.unsafeGetStorageImpl());
    int64_t slot;
    if (it != g_sent.end()) {
      slot = it->second.slot;
    } else {
      if (!g_free_slots.empty()) {
        slot = g_free_slots.back();
        g_free_slots.pop_back();
      } else {
        TORCH_CHECK(g_next_slot < kSlots, "neuron: cannot share more than ",
                    kSlots, " neuron storages at a time from one process");
        slot = g_next_slot++;
      }
      g_sent.emplace(storage.unsafeGetStorageImpl(), Sent{storage, slot});
    }
    counters[slot].fetch_add(1, std::memory_order_acq_rel);
    return {fd, g_counter_fd, slot, static_cast<int64_t>(span.offset),
            static_cast<int64_t>(storage.nbytes()), info.minor};
  } catch (...) {
    close(fd);
    throw;
  }
}

// A uint8 tensor over the @nbytes at @offset of the dma-buf @fd, on the
// card /dev/accel/accel@minor; @counter_fd/@slot: the exporter's count,
// given back when the storage is freed (or now, if this fails).
at::Tensor ipc_import(int64_t fd, int64_t counter_fd, int64_t slot,
                      int64_t offset, int64_t nbytes, int64_t minor) {
  Counter* counter = slot_of(counter_fd, slot);
  nrn_buffer* buf = nullptr;
  try {
    check_not_forked();
    TORCH_CHECK(offset >= 0 && nbytes > 0, "neuron: ipc_import: bad range");
    const c10::DeviceIndex index = card_of_minor(minor);
    int err = nrn_buffer_import(device(index), static_cast<int>(fd), &buf);
    TORCH_CHECK(err == 0, "neuron: importing a shared tensor's memory on "
                "neuron:", static_cast<int>(index), " failed: ", nrn_strerror(err));
    TORCH_CHECK(nrn_buffer_mem(buf) == NRN_MEM_DEVICE &&
                static_cast<uint64_t>(offset + nbytes) <= nrn_buffer_size(buf),
                "neuron: a shared tensor's range (", nbytes, " bytes at ",
                offset, ") is not within its buffer of ", nrn_buffer_size(buf),
                " bytes");
    void* map = nullptr;
    NEURON_CHECK(nrn_buffer_map(buf, &map));
    c10::Device dev(c10::DeviceType::PrivateUse1, index);
    auto* im = new Imported{buf, static_cast<uint64_t>(offset), counter, index,
                            getpid()};
    buf = nullptr;  // im's now
    c10::DataPtr data(static_cast<char*>(map) + offset, im, &ipc_free, dev);
    c10::Storage st(c10::Storage::use_byte_size_t(), static_cast<size_t>(nbytes),
                    std::move(data), /*allocator=*/nullptr, /*resizable=*/false);
    at::Tensor t = at::empty({0}, at::TensorOptions().dtype(at::kByte).device(dev));
    t.set_(st, 0, {nbytes}, {1});
    return t;
  } catch (...) {
    if (buf)
      nrn_buffer_free(buf);
    counter->fetch_sub(1, std::memory_order_acq_rel);
    throw;
  }
}

// Give back one count of the exporter's (a storage received twice).
void ipc_release(int64_t counter_fd, int64_t slot) {
  slot_of(counter_fd, slot)->fetch_sub(1, std::memory_order_acq_rel);
}

int64_t ipc_collect() {
  std::lock_guard<std::mutex> guard(g_lock);
  return g_counters ? collect_locked() : 0;
}

bool neuron_in_bad_fork() {
  return in_bad_fork();
}

}  // namespace

bool ipc_span(const c10::DataPtr& data, DeviceSpan* span) {
  if (data.get_deleter() != &ipc_free)
    return false;
  if (span) {
    const auto* im = static_cast<const Imported*>(data.get_context());
    *span = {im->buf, im->offset};
  }
  return true;
}

}  // namespace torch_neuron

TORCH_LIBRARY_FRAGMENT(neuron, m) {
  m.def("ipc_export(Tensor self) -> int[]", &torch_neuron::ipc_export);
  m.def("ipc_import(int fd, int counter_fd, int slot, int offset, int nbytes, "
        "int minor) -> Tensor", &torch_neuron::ipc_import);
  m.def("ipc_release(int counter_fd, int slot) -> ()", &torch_neuron::ipc_release);
  m.def("ipc_collect() -> int", &torch_neuron::ipc_collect);
  m.def("in_bad_fork() -> bool", &torch_neuron::neuron_in_bad_fork);
}
