// One iteration of a serving replica, tabulated from the lowering and the kernel model (equations
// in include/gpusim/step.hpp, IterationModel), each grid point when an iteration first needs it.
// The tables live in a TableCache: a model takes those of a cache entry made from the same inputs
// (TableCache::Tables::serves), so runs that differ in load or batch limit tabulate once.
#include <algorithm>
#include <cmath>
#include <limits>

#include "step/engine_host.hpp"
#include "step/internal.hpp"

namespace gpusim::step {

namespace {

using lowering::Op;
using lowering::Scope;

// Grid of token counts: every count up to kDense, then a geometric step of 1/kPerOctave octave.
// Between grid points the tables are interpolated linearly; GEMM time is piecewise linear in M
// between wave and tile boundaries, so the spacing bounds the interpolation error to a few percent
// of one wave.
constexpr double kDense = 64;
constexpr double kPerOctave = 16;

// Context lengths and a prompt length the attention slopes are measured at: long enough that the
// per-sequence part is small, short enough to stay in the range served.
constexpr double kContextA = 1024;
constexpr double kContextB = 5120;
constexpr double kPrefillProbe = 2048;

bool is_attention(const Op& op) { return op.role == lowering::OpRole::kAttention; }

struct Sum {
  double time = 0;
  double compute_bound = 0;
  double memory_bound = 0;
  double arithmetic = 0;
  double dram = 0;
  void add(const physics::KernelTime& kt, double count) {
    time += kt.time.value() * count;
    (kt.compute_bound() ? compute_bound : memory_bound) += kt.time.value() * count;
    arithmetic += kt.busy_arithmetic().value() * count;
    dram += kt.dram.value() * count;
  }
};

}  // namespace

IterationModel::Where IterationModel::where(const std::vector<double>& grid, double x) {
  if (x <= 0 || grid.empty()) {
    return {0, 0};
  }
  // The first grid point above x (std::upper_bound), guessed from where the grid's construction
  // puts it (index x up to kDense, then kPerOctave per octave) and stepped to the exact place. The
  // guess need not be exact, so log2 within an octave is taken as linear in the mantissa (off by
  // at most 0.09 octave, under two grid steps): the result is that of a search from anywhere.
  const std::size_t n = grid.size();
  double guess = x;
  if (x >= kDense) {
    int octave = 0;
    const double mantissa = std::frexp(x / kDense, &octave);  // x / kDense = mantissa · 2^octave, mantissa in [0.5, 1)
    guess = kDense + kPerOctave * (octave - 1) + kPerOctave * (2.0 * mantissa - 1.0);
  }
  auto i = static_cast<std::size_t>(std::min(guess, static_cast<double>(n)));
  while (i < n && grid[i] <= x) {
    ++i;
  }
  while (i > 0 && grid[i - 1] > x) {
    --i;
  }
  if (i == 0) {
    return {0, x / grid.front()};
  }
  if (i == n) {
    i = n - 1;  // beyond the grid: extend the last segment
  }
  return {i, (x - grid[i - 1]) / (grid[i] - grid[i - 1])};
}

// What the rows of the grid are tabulated from, the rows tabulated so far, and what a model
// derives from the lowering once (IterationModel's constructor).
struct TableCache::Tables {
  hardware::GpuSpec gpu;
  physics::Fabric fabric;
  workload::ModelShape model;
  workload::Inference inference;
  workload::Runtime runtime;
  int tp = 1;
  double stage_layers = 1;
  double clock = 1;
  bool sends_cross_nodes = false;
  std::vector<IterationModel::Row> rows;  // by grid index, valid where `ready`
  std::vector<char> ready;                // whether rows[i] is tabulated
  IterationModel::Point decode_per_row;
  IterationModel::Point decode_per_context;
  IterationModel::Point prefill_per_pair;
  double kernels = 0;
  // The interpolated parts by whole token and row count (IterationModel::token_part, row_part),
  // made by whichever model first asked: a count below a grid's last point has the same segment in
  // every grid (each a prefix of one sequence), so its part is the same for every model.
  std::vector<IterationModel::TokenPart> by_tokens;
  std::vector<IterationModel::RowPart> by_rows;

  // Whether these tables are those of the given inputs: equal in everything the tables read. Left
  // out of the comparison, as the tables never read them (TableCache): the inference's batch and
  // load; of the GPU, its kernel gap, launch costs and ranges; of the runtime, its launch path,
  // dispatch, remainder, ranges and the engine's scheduling and host costs (all but its all-reduce).
  // A model takes those from its own inputs (IterationModel's constructor).
  [[nodiscard]] bool serves(const hardware::GpuSpec& g, const physics::Fabric& f, const workload::ModelShape& m,
                            const workload::Inference& inf, const workload::Runtime& rt, int tensor, double layers,
                            double at_clock, bool crosses) const {
    return tp == tensor && stage_layers == layers && clock == at_clock && sends_cross_nodes == crosses && model == m &&
           fabric == f && same_read(gpu, g) && same_read(inference, inf) && same_read(runtime, rt);
  }
  static bool same_read(hardware::GpuSpec a, const hardware::GpuSpec& b) {
    a.efficiency.kernel_overhead = b.efficiency.kernel_overhead;
    a.efficiency.launch_eager = b.efficiency.launch_eager;
    a.efficiency.launch_graph = b.efficiency.launch_graph;
    a.ranges = b.ranges;
    return a == b;
  }
  static bool same_read(workload::Inference a, const workload::Inference& b) {
    a.batch = b.batch;
    a.batch_max = b.batch_max;
    a.load = b.load;
    a.speculative = b.speculative;  // a model's speculation is its own (IterationModel's constructor)
    a.prefix = b.prefix;
    return a == b;
  }
  static bool same_read(workload::Runtime a, const workload::Runtime& b) {
    const workload::ServingEngine own = a.serving;
    a.serving = b.serving;
    a.serving.allreduce_max = own.allreduce_max;
    a.serving.allreduce_one_shot_max = own.allreduce_one_shot_max;
    a.serving.allreduce_latency = own.allreduce_latency;
    a.serving.allreduce_on_amd = own.allreduce_on_amd;
    a.cuda_graphs = b.cuda_graphs;
    a.dispatch = b.dispatch;
    a.remainder = b.remainder;
    a.ranges = b.ranges;
    return a == b;
  }
};

TableCache::TableCache() = default;
TableCache::~TableCache() = default;
TableCache::TableCache(TableCache&&) noexcept = default;
TableCache& TableCache::operator=(TableCache&&) noexcept = default;

const IterationModel::Row& IterationModel::row(std::size_t i) const {
  TableCache::Tables& src = *tables_;
  if (src.ready[i] != 0) {
    return src.rows[i];
  }
  const double t = grid_[i];
  const double e = 2.0;  // activations travel in 16 bits
  Sum dense;
  Sum head;
  for (const Op& op : lowering::lower_forward(src.model, src.inference, src.runtime, src.tp, t, 1.0, 1.0)) {
    if (is_attention(op)) {
      continue;
    }
    const physics::KernelTime kt = physics::kernel_time(op, src.gpu, src.clock);
    if (op.scope == Scope::kHead) {
      head.add(kt, op.count);
    } else {
      dense.add(kt, op.count * (op.scope == Scope::kLayer ? src.stage_layers : 1.0));
    }
  }
  Row& r = src.rows[i];
  r.dense = {dense.time, dense.compute_bound, dense.memory_bound, dense.arithmetic, dense.dram};
  r.head = {head.time, head.compute_bound, head.memory_bound, head.arithmetic, head.dram};
  const Bytes activation(t * static_cast<double>(src.model.hidden) * e);
  const double reduces = 2.0 * src.stage_layers + 1.0;
  r.comm = (physics::serving_allreduce_time(src.fabric, src.runtime.serving, activation, src.tp) * reduces).value();
  r.send = physics::p2p_time(activation, src.sends_cross_nodes ? src.fabric.inter_bus : src.fabric.intra_p2p,
                             src.sends_cross_nodes ? src.fabric.inter_alpha : src.fabric.intra_alpha)
               .value();
  src.ready[i] = 1;
  return r;
}

bool IterationModel::span(Where w, Span& out) const {
  if (grid_.empty() || (w.i == 0 && w.f == 0)) {
    return false;
  }
  out.hi = &row(w.i);
  out.lo = w.i == 0 ? nullptr : &row(w.i - 1);
  out.f = w.f;
  return true;
}

IterationModel::Point IterationModel::at(const Span& s, Point Row::*table) {
  const Point& b = s.hi->*table;
  const double f = s.f;
  if (s.lo == nullptr) {  // below the first grid point: scaled from zero
    return {b.time * f, b.compute_bound * f, b.memory_bound * f, b.arithmetic * f, b.dram * f};
  }
  const Point& a = s.lo->*table;
  return {a.time + (b.time - a.time) * f, a.compute_bound + (b.compute_bound - a.compute_bound) * f,
          a.memory_bound + (b.memory_bound - a.memory_bound) * f, a.arithmetic + (b.arithmetic - a.arithmetic) * f,
          a.dram + (b.dram - a.dram) * f};
}

double IterationModel::at(const Span& s, double Row::*table) {
  const double b = s.hi->*table;
  if (s.lo == nullptr) {
    return b * s.f;
  }
  const double a = s.lo->*table;
  return a + (b - a) * s.f;
}

IterationModel::IterationModel(const hardware::System& sys, const physics::Fabric& fabric,
                               const workload::ModelShape& m, const workload::Inference& inf,
                               const workload::Runtime& rt, const workload::Layout& layout, double clock,
                               double max_tokens, TableCache& cache)
    : remainder_(rt.remainder), pipeline_(layout.pipeline), clock_(clock), engine_(rt.serving) {
  const hardware::GpuSpec& g = sys.gpu;
  const double stage_layers = std::ceil(static_cast<double>(m.layers) / layout.pipeline);
  const int tp = layout.tensor;
  const bool sends_cross_nodes = static_cast<std::int64_t>(layout.tensor) * layout.pipeline > sys.gpus_per_node;
  for (double t = 1; t <= kDense; t += 1) {
    grid_.push_back(t);
  }
  // Every grid is a prefix of one sequence: a row's index names the same token count in any grid.
  for (double t = kDense; t < max_tokens * std::pow(2.0, 1.0 / kPerOctave);) {
    t *= std::pow(2.0, 1.0 / kPerOctave);
    grid_.push_back(std::ceil(t));
  }
  for (const auto& kept : cache.tables_) {
    if (kept->serves(g, fabric, m, inf, rt, tp, stage_layers, clock, sends_cross_nodes)) {
      tables_ = kept;
      break;
    }
  }
  if (tables_ == nullptr) {
    tables_ = std::make_shared<TableCache::Tables>(TableCache::Tables{
        g, fabric, m, inf, rt, tp, stage_layers, clock, sends_cross_nodes, {}, {}, {}, {}, {}, 0, {}, {}});
    derive(*tables_);
    cache.tables_.push_back(tables_);
  }
  if (tables_->rows.size() < grid_.size()) {  // a longer grid than the tables' so far
    tables_->rows.resize(grid_.size());
    tables_->ready.resize(grid_.size(), 0);
  }
  // Counts beyond the grid's last point extend its last segment: this grid's own, kept aside.
  memo_limit_ = std::min(static_cast<double>(kByCount), grid_.back());
  decode_per_row_ = tables_->decode_per_row;
  decode_per_context_ = tables_->decode_per_context;
  prefill_per_pair_ = tables_->prefill_per_pair;
  kernels_ = tables_->kernels;
  gap_ = g.efficiency.kernel_overhead * kernels_;
  host_ = physics::launch_cost(g, rt) * kernels_;
  const workload::Speculative& sp = inf.speculative;
  if (sp.on()) {
    spec_extra_ = static_cast<double>(sp.tokens);
    const double tau = workload::tokens_per_step(sp);
    const auto prompt = static_cast<double>(inf.prompt_tokens);
    const auto output = static_cast<double>(inf.output_tokens);
    const double steps = 1.0 + (output - 1.0) / tau;
    context_scale_ = (prompt + output / 2.0) / (prompt + steps / 2.0);
    passes_ = workload::proposer_passes(sp);
    if (sp.proposer && passes_ > 0) {
      // The proposer: its own network at this clock and tensor split, whole on one stage, its
      // host work the engine's iteration's (counted once, by the target).
      workload::Inference own = inf;
      own.speculative = workload::Speculative{};
      workload::Runtime quiet = rt;
      quiet.serving.step_overhead = Seconds(0);
      quiet.serving.schedule_per_sequence = Seconds(0);
      quiet.serving.output_per_sequence = Seconds(0);
      workload::Layout one = layout;
      one.pipeline = 1;
      proposer_ =
          std::make_shared<const IterationModel>(sys, fabric, *sp.proposer, own, quiet, one, clock, max_tokens, cache);
    }
  }
}

IterationShape IterationModel::verified(const IterationShape& s) const {
  if (spec_extra_ <= 0) {
    return s;
  }
  IterationShape v = s;
  const double extra = spec_extra_ * s.decode_rows;
  v.tokens += extra;
  v.rows += extra;
  v.context *= context_scale_;
  return v;
}

IterationCost IterationModel::propose(const IterationShape& s) const {
  IterationCost c;
  if (!proposer_ || s.tokens <= 0) {
    return c;
  }
  IterationShape first = s;  // the prompt chunks fill its cache; each decode row proposes its first token
  first.context *= context_scale_;
  c = proposer_->cost(first);
  if (s.decode_rows > 0 && passes_ > 1) {
    IterationShape next;  // the further proposals: the decode rows alone
    next.tokens = next.rows = next.decode_rows = s.decode_rows;
    next.context = first.context + s.decode_rows;
    const IterationCost more = proposer_->cost(next);
    static_cast<PhaseCost&>(c) += more.times(passes_ - 1.0);
    c.communication += more.communication * (passes_ - 1.0);
    c.communication_total += more.communication_total * (passes_ - 1.0);
  }
  return c;
}

void IterationModel::derive(TableCache::Tables& t) {
  const hardware::GpuSpec& g = t.gpu;
  // Attention: decode reads each sequence's cache (memory-bound, linear in the context); prefill
  // is compute-bound, linear in the causal (query, key) pairs.
  auto attention = [&](double seqs, double q, double kv) {
    Sum s;
    for (const Op& op : lowering::lower_forward(t.model, t.inference, t.runtime, t.tp, seqs, q, kv)) {
      if (is_attention(op) && op.scope == Scope::kLayer) {
        s.add(physics::kernel_time(op, g, t.clock), op.count * t.stage_layers);
      }
    }
    return s;
  };
  const Sum a = attention(1, 1, kContextA);
  const Sum b = attention(1, 1, kContextB);
  const double span = kContextB - kContextA;
  t.decode_per_context = {(b.time - a.time) / span, (b.compute_bound - a.compute_bound) / span,
                          (b.memory_bound - a.memory_bound) / span, (b.arithmetic - a.arithmetic) / span,
                          (b.dram - a.dram) / span};
  const Point& c = t.decode_per_context;
  t.decode_per_row = {a.time - c.time * kContextA, a.compute_bound - c.compute_bound * kContextA,
                      a.memory_bound - c.memory_bound * kContextA, a.arithmetic - c.arithmetic * kContextA,
                      a.dram - c.dram * kContextA};
  const Sum p = attention(1, kPrefillProbe, kPrefillProbe);
  const double pairs = kPrefillProbe * (kPrefillProbe + 1.0) / 2.0;
  t.prefill_per_pair = {p.time / pairs, p.compute_bound / pairs, p.memory_bound / pairs, p.arithmetic / pairs,
                        p.dram / pairs};
  // Kernels of one stage's iteration: every op of the pass, plus the all-reduce kernels.
  for (const Op& op : lowering::lower_forward(t.model, t.inference, t.runtime, t.tp, 1.0, 1.0, 1.0)) {
    t.kernels += op.count * (op.scope == Scope::kLayer ? t.stage_layers : 1.0);
  }
  if (t.tp > 1) {
    t.kernels += 2.0 * t.stage_layers + 1.0;
  }
}

namespace {
// The slot of a whole count below `limit` in `memo` (grown to it), or `other` for any other count.
template <class Part>
Part& slot(std::vector<Part>& memo, Part& other, double count, double limit) {
  // (limit is at most kByCount: a whole count below it converts exactly, through one instruction)
  if (count < 1 || count >= limit || count != static_cast<double>(static_cast<std::int64_t>(count))) {
    return other;
  }
  const auto n = static_cast<std::size_t>(static_cast<std::int64_t>(count));
  if (n >= memo.size()) {
    memo.resize(std::max(2 * memo.size(), n + 1));
  }
  return memo[n];
}

// The part of a count: the memo's (or `other`'s), made by `fill` the first time.
template <class Part, class Fill>
const Part& part_of(std::vector<Part>& memo, Part& other, double count, double limit, Fill&& fill) {
  Part& p = slot(memo, other, count, limit);
  if (p.count != count) {
    p.count = count;
    fill(p);
  }
  return p;
}
}  // namespace

const IterationModel::TokenPart& IterationModel::token_part(double tokens) const {
  return part_of(tables_->by_tokens, other_tokens_, tokens, memo_limit_, [&](TokenPart& t) {
    Span at_tokens;
    const bool any = span(where(grid_, tokens), at_tokens);
    t.dense = any ? at(at_tokens, &Row::dense) : Point{};
    t.comm = any ? at(at_tokens, &Row::comm) : 0.0;
    t.send = any ? at(at_tokens, &Row::send) : 0.0;
  });
}

const IterationModel::RowPart& IterationModel::row_part(double rows) const {
  return part_of(tables_->by_rows, other_rows_, rows, memo_limit_, [&](RowPart& r) {
    Span at_rows;
    r.head = span(where(grid_, rows), at_rows) ? at(at_rows, &Row::head) : Point{};
  });
}

Seconds IterationModel::time(const TokenPart& t, const RowPart& r, const IterationShape& v, const IterationShape& s,
                             double& stage, double& busy) const {
  const double kernels = t.dense.time + r.head.time + decode_per_row_.time * v.decode_rows +
                         decode_per_context_.time * v.context + prefill_per_pair_.time * v.pairs;
  busy = kernels * (1.0 + remainder_) + gap_.value();
  const double gpu = busy + t.comm;
  stage = std::max(gpu, host_.value());
  Seconds device(pipeline_ * stage + (pipeline_ - 1) * t.send);
  if (proposer_) {
    device += propose(s).time;
  }
  return device + engine_host_time(engine_, s, device);
}

Seconds IterationModel::time(const IterationShape& s) const {
  double stage = 0;
  double busy = 0;
  const IterationShape v = verified(s);
  const TokenPart& t = token_part(v.tokens);
  return time(t, row_part(v.rows), v, s, stage, busy);
}

IterationModel::Counts IterationModel::counts(const IterationShape& s) const {
  const IterationShape v = verified(s);
  Counts c;
  c.tokens_ = &token_part(v.tokens);
  c.rows_ = &row_part(v.rows);
  return c;
}

Seconds IterationModel::time(const Counts& c, const IterationShape& s) const {
  double stage = 0;
  double busy = 0;
  return time(*c.tokens_, *c.rows_, verified(s), s, stage, busy);
}

// time() with each of its terms at its least. The tables at a count are linear interpolations
// between two grid points, never below the lower of them, so each table's least over the grid
// bounds it for every count from 1 to the grid's last point; past it the last segment extends, and
// bounds it only while that segment does not fall. The attention terms are products of counts
// (>= 0) and coefficients, at least 0 while no coefficient is negative. The engine's host work is
// least with no sequence, in a decode-only iteration (whose scheduler call scheduler_steps share)
// that the GPU hides all it can of. A margin of 1e-9 keeps the bound below time() whatever the
// order its sums round in.
Seconds IterationModel::floor() const {
  if (grid_.empty() || decode_per_row_.time < 0 || decode_per_context_.time < 0 || prefill_per_pair_.time < 0 ||
      remainder_ < -1.0) {
    return Seconds(0);
  }
  const std::size_t n = grid_.size();
  double dense = row(0).dense.time;
  double head = row(0).head.time;
  double comm = row(0).comm;
  double send = row(0).send;
  for (std::size_t i = 1; i < n; ++i) {
    const Row& r = row(i);
    dense = std::min(dense, r.dense.time);
    head = std::min(head, r.head.time);
    comm = std::min(comm, r.comm);
    send = std::min(send, r.send);
  }
  if (n > 1) {
    const Row& last = row(n - 1);
    const Row& before = row(n - 2);
    if (last.dense.time < before.dense.time || last.head.time < before.head.time || last.comm < before.comm ||
        last.send < before.send) {
      return Seconds(0);
    }
  }
  const double busy = (dense + head) * (1.0 + remainder_) + gap_.value();
  const double stage = std::max(busy + comm, host_.value());
  const Seconds device(pipeline_ * stage + (pipeline_ - 1) * send);
  const Seconds host = engine_host_time(engine_, IterationShape{}, Seconds(std::numeric_limits<double>::infinity()));
  constexpr double kMargin = 1e-9;
  return std::max(Seconds(0), (device + host) * (1.0 - kMargin));
}

IterationCost IterationModel::cost(const IterationShape& s) const { return cost(counts(s), s); }

IterationCost IterationModel::cost(const Counts& parts, const IterationShape& scheduled) const {
  const IterationShape s = verified(scheduled);
  const TokenPart& t = *parts.tokens_;
  const RowPart& r = *parts.rows_;
  const Point& dense = t.dense;
  const Point& head = r.head;
  auto sum = [&](auto field) {
    return dense.*field + head.*field + decode_per_row_.*field * s.decode_rows +
           decode_per_context_.*field * s.context + prefill_per_pair_.*field * s.pairs;
  };
  double stage = 0;
  double busy = 0;
  IterationCost c;
  c.time = time(t, r, s, scheduled, stage, busy);
  c.compute_bound = Seconds(sum(&Point::compute_bound) * (1.0 + remainder_));
  c.memory_bound = Seconds(sum(&Point::memory_bound) * (1.0 + remainder_));
  c.arithmetic = Seconds(sum(&Point::arithmetic) * (1.0 + remainder_));
  c.communication = Seconds(pipeline_ * (stage - std::max(busy, host_.value())) + (pipeline_ - 1) * t.send);
  c.communication_total = Seconds(pipeline_ * t.comm + (pipeline_ - 1) * t.send);
  c.dram = Bytes(sum(&Point::dram));
  if (proposer_) {  // its kernels and traffic beside the target's (its time is in c.time already)
    const IterationCost p = propose(scheduled);
    c.compute_bound += p.compute_bound;
    c.memory_bound += p.memory_bound;
    c.arithmetic += p.arithmetic;
    c.dram += p.dram;
    c.communication += p.communication;
    c.communication_total += p.communication_total;
  }
  return c;
}

}  // namespace gpusim::step
