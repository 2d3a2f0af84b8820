// Private: build validated structs from parsed TOML tables. Each reader reports every problem
// through the Reader's diagnostics and leaves defaults where a value was bad; the caller throws.
#pragma once

#include <toml++/toml.h>

#include "gpusim/spec/hardware.hpp"
#include "gpusim/workload/model_shape.hpp"
#include "spec/toml_reader.hpp"

namespace gpusim::detail {

// Deep merge: keys of `over` replace those of `base`; nested tables merge recursively.
void merge_into(toml::table& base, toml::table&& over);

// GPU spec from a fully merged table (base resolved, arch efficiency merged).
void read_gpu(Reader& r, GpuSpec& out);
void read_link(Reader& r, LinkSpec& out);
// Model-shape keys. With Need::kRequired every key must be present (spec files); with
// kOptional only present keys overwrite `out` (scenario [model] over a preset).
void read_model_keys(Reader& r, ModelShape& out, Need need);
// Cross-field checks (heads divide hidden, kv_heads divide heads, ...).
void check_model(Reader& r, const ModelShape& m);

}  // namespace gpusim::detail
