// SPDX-License-Identifier: MIT
// The profiler's collector: the card time of each operator's work.
//
// While a session runs (a torch.profiler profile with device activities,
// NeuronKineto.cpp), Kineto tells us on each thread which operator is the
// innermost one running (its correlation id). When that operator issues
// work on a stream (device_stream() calls note_stream()), a TIMESTAMP
// instruction (nrn_op_timestamp) goes into the stream's batch before the
// work; when the operator ends, or a nested operator starts, or it moves to
// another stream or to a copy, another one goes after it and the batch is
// submitted. A kernel interval closed by a nested operator's start reopens
// when that operator ends. The card writes its clock into a slot of a
// buffer of ours at each, in the same job as the work between them: one
// interval of card work of that operator, a kernel on the lane of the
// stream's NeuronCore or a copy on its DMA queue (note_copy(); a copy is a
// DMA job of its own, so its interval also holds the card's hops between
// the queues).
//
// The card's clock goes on the host's wall clock through a reference
// TIMESTAMP on an idle stream of the profiler's own at the card's first use
// in the session, bracketed by host clock reads (the tightest of a few
// tries; its midpoint). At the end, a plain event recorded on every stream
// used and waited for makes every slot written; an unwritten (zero) slot or
// a stream whose work failed drops its intervals, reported as an error.
//
// Submitting the batch at each interval's end makes a profiled run submit
// one job per operator instead of batching many: the card time per
// operator excludes the card's waits for the host, the run is slower.
// Nothing is issued on a capturing stream (nothing runs there).
#include "NeuronProfiler.h"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace torch_neuron::profiler {

std::atomic<bool> g_active{false};

namespace {

// The process is exiting: a profile left open (its stop raised) may still
// be stopped by Kineto's teardown, when the cards and PyTorch's state are
// no longer to be used. Set by an exit handler registered at load, which
// runs before the destructors of everything loaded earlier.
std::atomic<bool> g_exiting{false};
const int g_exit_handler = std::atexit([] {
  g_exiting.store(true);
  g_active.store(false);
});

constexpr uint32_t kSlabSlots = 8192;  // int64 clock slots per buffer

struct Open {
  nrn_stream* s = nullptr;
  c10::DeviceIndex device = 0;
  Work kind = Work::Kernel;
  uint32_t lane = 0;
  uint64_t bytes = 0;
  uint32_t start = 0;  // slot
};

// An operator running on this thread.
struct Frame {
  uint64_t correlation;
  Open open;  // open.s == nullptr: no interval open
  // The kernel interval a nested operator's start closed: reopened when it
  // ends, since the operator may go on issuing on the stream it already
  // holds (a nested allocation between its first and later instructions).
  nrn_stream* resume = nullptr;
  c10::DeviceIndex resume_device = 0;
  bool copy_next = false;
  Work copy_kind = Work::Kernel;
  uint64_t copy_bytes = 0;
};

struct Closed {
  uint64_t correlation;
  Open open;
  uint32_t end;  // slot
};

// Slots of card clock values of one card.
struct Slab {
  nrn_buffer* buf;
  volatile int64_t* map;
};

struct Card {
  std::vector<Slab> slabs;
  uint32_t next = 0;  // next free slot in this session
  nrn_stream* own = nullptr;  // the reference's stream
  bool ref = false;  // the reference of this session was taken
  int64_t ref_card_ns = 0, ref_host_ns = 0;
};

// The collector's state, guarded by its lock (profiling serialises the
// bracketing of operators of all threads; it costs nothing when off). It
// is never destroyed: Kineto may still call a session during the process's
// teardown (a profile left open by an exception), after static destructors
// ran.
struct State {
  std::mutex lock;
  uint64_t generation = 0;
  std::vector<Closed> closed;
  std::vector<std::string> errors;
  std::array<Card, kMaxDevices> cards;
  std::map<nrn_stream*, c10::DeviceIndex> streams;  // used in this session
  uint64_t stamps = 0;  // TIMESTAMPs issued, ever (timestamps_issued())
};
State& g_state = *new State;
std::mutex& g_lock = g_state.lock;
uint64_t& g_generation = g_state.generation;
std::vector<Closed>& g_closed = g_state.closed;
std::vector<std::string>& g_errors = g_state.errors;
std::array<Card, kMaxDevices>& g_cards = g_state.cards;
std::map<nrn_stream*, c10::DeviceIndex>& g_streams = g_state.streams;
uint64_t& g_stamps = g_state.stamps;

// This thread's running operators; like the state, never destroyed (a
// thread_local object could be used after its destructor at thread exit).
thread_local std::vector<Frame>* t_frames = nullptr;
thread_local uint64_t t_generation = 0;

int64_t wall_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void note_error(const std::string& what, int err) {
  if (g_errors.size() < 16)
    g_errors.push_back("neuron profiler: " + what + ": " + nrn_strerror(err));
}

// This thread's operators of the running session.
std::vector<Frame>& frames() {
  if (!t_frames)
    t_frames = new std::vector<Frame>;
  if (t_generation != g_generation) {
    t_frames->clear();  // a previous session's
    t_generation = g_generation;
  }
  return *t_frames;
}

// A free clock slot of card @index (-1 if none could be had).
int64_t take_slot(c10::DeviceIndex index) {
  Card& c = g_cards[index];
  if (c.next == c.slabs.size() * kSlabSlots) {
    Slab slab{nullptr, nullptr};
    void* map = nullptr;
    int err = nrn_buffer_alloc(device(index), kSlabSlots * sizeof(int64_t),
                               NRN_MEM_DEVICE, &slab.buf);
    if (err >= 0)
      err = nrn_buffer_map(slab.buf, &map);
    if (err < 0) {
      nrn_buffer_free(slab.buf);
      note_error("clock buffer", err);
      return -1;
    }
    std::memset(map, 0, kSlabSlots * sizeof(int64_t));
    slab.map = static_cast<volatile int64_t*>(map);
    c.slabs.push_back(slab);
  }
  return c.next++;
}

int stamp(c10::DeviceIndex index, nrn_stream* s, uint32_t slot) {
  g_stamps++;
  const Slab& slab = g_cards[index].slabs[slot / kSlabSlots];
  return nrn_op_timestamp(s, slab.buf, (slot % kSlabSlots) * sizeof(int64_t));
}

// The card's clock at @slot (0: never written), and the slot cleared.
int64_t read_slot(c10::DeviceIndex index, uint32_t slot) {
  volatile int64_t* p = &g_cards[index].slabs[slot / kSlabSlots]
                             .map[slot % kSlabSlots];
  int64_t v = *p;
  *p = 0;
  return v;
}

// The reference point of card @index's clock in this session.
bool reference(c10::DeviceIndex index) {
  Card& c = g_cards[index];
  if (c.ref)
    return true;
  int err = 0;
  if (!c.own)
    err = nrn_stream_create(device(index), &c.own);
  int64_t slot = err < 0 ? -1 : take_slot(index);
  int64_t best = -1;
  for (int i = 0; i < 3 && slot >= 0 && err >= 0; i++) {
    int64_t before = wall_ns();
    err = stamp(index, c.own, static_cast<uint32_t>(slot));
    if (err >= 0)
      err = nrn_stream_sync(c.own);
    int64_t after = wall_ns();
    int64_t card = read_slot(index, static_cast<uint32_t>(slot));
    if (err >= 0 && card && (best < 0 || after - before < best)) {
      best = after - before;
      c.ref_card_ns = card;
      c.ref_host_ns = before + (after - before) / 2;
    }
  }
  if (err < 0)
    note_error("reference timestamp", err);
  c.ref = best >= 0;
  return c.ref;
}

void close(Frame& f) {
  Open o = f.open;
  f.open.s = nullptr;
  if (!o.s || nrn_stream_is_capturing(o.s) == 1)
    return;
  int64_t end = take_slot(o.device);
  if (end < 0)
    return;
  int err = stamp(o.device, o.s, static_cast<uint32_t>(end));
  if (err >= 0)
    err = nrn_stream_flush(o.s);
  if (err < 0) {
    note_error("timestamp at the end of an interval", err);
    return;
  }
  g_closed.push_back({f.correlation, o, static_cast<uint32_t>(end)});
}

void open(Frame& f, c10::DeviceIndex index, nrn_stream* s, Work kind,
          uint64_t bytes) {
  if (nrn_stream_is_capturing(s) == 1 || !reference(index))
    return;
  unsigned int core = 0, dma = 0;
  int err = nrn_stream_queues(s, &core, &dma);
  int64_t start = err < 0 ? -1 : take_slot(index);
  if (start >= 0)
    err = stamp(index, s, static_cast<uint32_t>(start));
  if (err < 0 || start < 0) {
    if (err < 0)
      note_error("timestamp at the start of an interval", err);
    return;
  }
  g_streams[s] = index;
  uint32_t lane = kind == Work::Kernel ? core : kDmaLane + dma;
  f.open = Open{s, index, kind, lane, bytes, static_cast<uint32_t>(start)};
}

void guarded(const char* what, void (*fn)(Frame&), Frame& f) {
  try {
    fn(f);
  } catch (const std::exception& e) {
    if (g_errors.size() < 16)
      g_errors.push_back(std::string("neuron profiler: ") + what + ": " +
                         e.what());
  }
}

bool valid(c10::DeviceIndex index) {
  return index >= 0 && index < kMaxDevices;
}

}  // namespace

void note_stream(c10::DeviceIndex index, nrn_stream* s) noexcept {
  std::lock_guard<std::mutex> guard(g_lock);
  if (!g_active.load(std::memory_order_relaxed) || !valid(index) || !s)
    return;
  auto& fs = frames();
  if (fs.empty())
    return;  // work outside any operator: not attributed
  Frame& f = fs.back();
  if (f.open.s == s && f.open.kind == Work::Kernel && !f.copy_next)
    return;
  try {
    close(f);
    Work kind = f.copy_next ? f.copy_kind : Work::Kernel;
    uint64_t bytes = f.copy_next ? f.copy_bytes : 0;
    f.copy_next = false;
    open(f, index, s, kind, bytes);
  } catch (const std::exception& e) {
    if (g_errors.size() < 16)
      g_errors.push_back(std::string("neuron profiler: ") + e.what());
  }
}

void note_copy(c10::DeviceIndex index, Work kind, uint64_t bytes) noexcept {
  std::lock_guard<std::mutex> guard(g_lock);
  if (!g_active.load(std::memory_order_relaxed) || !valid(index))
    return;
  auto& fs = frames();
  if (fs.empty())
    return;
  Frame& f = fs.back();
  guarded("copy", close, f);
  f.copy_next = true;
  f.copy_kind = kind;
  f.copy_bytes = bytes;
}

void push_correlation(uint64_t id) noexcept {
  std::lock_guard<std::mutex> guard(g_lock);
  if (!g_active.load(std::memory_order_relaxed))
    return;
  auto& fs = frames();
  if (!fs.empty()) {
    Frame& parent = fs.back();
    if (parent.open.s && parent.open.kind == Work::Kernel) {
      parent.resume = parent.open.s;
      parent.resume_device = parent.open.device;
    }
    guarded("nested operator", close, parent);  // the parent's so far
  }
  fs.push_back(Frame{id, Open{}});
}

void pop_correlation() noexcept {
  std::lock_guard<std::mutex> guard(g_lock);
  if (!g_active.load(std::memory_order_relaxed))
    return;
  auto& fs = frames();
  if (fs.empty())
    return;
  guarded("operator end", close, fs.back());
  fs.pop_back();
  if (fs.empty() || !fs.back().resume)
    return;
  Frame& parent = fs.back();
  nrn_stream* s = parent.resume;
  parent.resume = nullptr;
  if (parent.open.s || parent.copy_next)
    return;  // it opened another interval meanwhile
  try {
    open(parent, parent.resume_device, s, Work::Kernel, 0);
  } catch (const std::exception& e) {
    if (g_errors.size() < 16)
      g_errors.push_back(std::string("neuron profiler: resuming an operator: ") +
                         e.what());
  }
}

int64_t timestamps_issued() {
  std::lock_guard<std::mutex> guard(g_lock);
  return static_cast<int64_t>(g_stamps);
}

void begin_session() {
  std::lock_guard<std::mutex> guard(g_lock);
  g_generation++;
  g_closed.clear();
  g_errors.clear();
  g_streams.clear();
  for (Card& c : g_cards) {
    c.next = 0;
    c.ref = false;
  }
  g_active.store(true, std::memory_order_relaxed);
}

std::vector<DeviceRecord> end_session(std::vector<std::string>* errors) {
  std::lock_guard<std::mutex> guard(g_lock);
  g_active.store(false, std::memory_order_relaxed);
  g_generation++;  // operators still open on other threads are dropped
  if (g_exiting.load()) {
    g_closed.clear();
    g_streams.clear();
    return {};
  }
  // Every TIMESTAMP issued is submitted and done once a plain event
  // recorded after it on its stream is.
  std::map<nrn_stream*, int> status;
  for (const auto& [s, index] : g_streams) {
    nrn_event* ev = nullptr;
    int err = -EBUSY;
    if (nrn_stream_is_capturing(s) != 1) {
      err = nrn_event_create(device(index), &ev);
      if (err >= 0)
        err = nrn_event_record(ev, s);
      if (err >= 0)
        err = nrn_event_wait(ev, -1);
      nrn_event_destroy(ev);
    }
    status[s] = err;
    if (err < 0)
      note_error("card work of a profiled stream", err);
  }
  std::vector<DeviceRecord> out;
  out.reserve(g_closed.size());
  size_t unwritten = 0;
  for (const Closed& c : g_closed) {
    const Card& card = g_cards[c.open.device];
    int64_t t0 = read_slot(c.open.device, c.open.start);
    int64_t t1 = read_slot(c.open.device, c.end);
    if (status[c.open.s] < 0)
      continue;
    if (!t0 || !t1 || t1 < t0) {
      unwritten++;
      continue;
    }
    out.push_back(DeviceRecord{
        c.correlation, c.open.device, c.open.kind, c.open.lane, c.open.bytes,
        card.ref_host_ns + (t0 - card.ref_card_ns),
        card.ref_host_ns + (t1 - card.ref_card_ns)});
  }
  if (unwritten && g_errors.size() < 16)
    g_errors.push_back("neuron profiler: " + std::to_string(unwritten) +
                       " intervals without card timestamps were dropped");
  // Open intervals of other threads: their slots may still be written.
  for (Card& c : g_cards)
    for (uint32_t i = 0; i < c.next; i++)
      read_slot(static_cast<c10::DeviceIndex>(&c - g_cards.data()), i);
  g_closed.clear();
  g_streams.clear();
  errors->swap(g_errors);
  return out;
}

}  // namespace torch_neuron::profiler
