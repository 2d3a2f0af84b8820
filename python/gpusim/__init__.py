"""gpusim from Python: the analytical GPU performance and cost simulator's answers as dicts.

Each function asks what one ``gpusim`` subcommand asks and returns its JSON report parsed
(``json.loads``), so the keys, units and meanings are those of docs/report.md; ``sweep`` returns
flat rows ready for ``pandas.DataFrame``. The module's own page is docs/python.md.

A scenario is a path to a scenario file (docs/scenarios.md) or a dict of its tables::

    import gpusim
    r = gpusim.estimate("scenarios/gpt2-124m-rtx4090.toml", system__gpus=2)
    r["step"]["time_s"], r["cost"]["cloud_usd"]

Overrides are the CLI's ``--set KEY=VALUE``: ``overrides={"system.gpus": 8}``, or as keyword
arguments with ``__`` for ``.`` (``system__gpus=8``). Values are Python values (str, int, float,
bool, list, dict); a quantity is a string with its unit (``slo__ttft="300 ms"``).

Bad input (a scenario or spec file with a problem, an unknown id, a file that cannot be read)
raises ``InputError``, a ``ValueError`` whose text is what the CLI prints; a wrong argument type
raises ``TypeError``, a bad argument value ``ValueError``.
"""

import json
import numbers
import os
from collections.abc import Iterable, Mapping

from . import _gpusim, _toml

__version__ = _gpusim.__version__

__all__ = [
    "InputError",
    "breakeven",
    "calibrate",
    "compare",
    "compare_systems",
    "estimate",
    "gpu",
    "import_model",
    "init",
    "plan",
    "plan_many",
    "roofline",
    "specs",
    "sweep",
    "validate",
]

_SPEC_KINDS = ("gpus", "links", "models", "arch", "runtimes", "comm")


class InputError(ValueError):
    """A problem with the input: a scenario or spec file, an override, an id, a file to read.

    ``str(err)`` is what the CLI prints: one ``file:line:col: key: message`` line per problem.
    ``diagnostics`` lists every problem as a dict with ``file``, ``line``, ``column`` (1-based; 0
    when unknown), ``key`` (dotted, may be empty) and ``message``; ``file``, ``line``, ``column``,
    ``key`` and ``message`` are also attributes, taken from the first problem. A scenario given as
    a dict is named ``"<dict>"`` and its positions are in the TOML written from it.
    """

    def __init__(self, message, diagnostics=()):
        super().__init__(message)
        self.diagnostics = [dict(d) for d in diagnostics]
        first = self.diagnostics[0] if self.diagnostics else {}
        self.file = first.get("file", "")
        self.line = first.get("line", 0)
        self.column = first.get("column", 0)
        self.key = first.get("key", "")
        self.message = first.get("message", message)

    def __reduce__(self):  # pickles with its diagnostics (multiprocessing, concurrent.futures)
        return (type(self), (self.args[0], self.diagnostics))


# The library raises this type for every input problem it finds.
_gpusim._set_input_error(InputError)


# ---------------------------------------------------------------- arguments in the CLI's form


def _scenario(scenario):
    """(path, TOML text or None): a file is read by the library, a dict is written as TOML here."""
    if isinstance(scenario, Mapping):
        return "<dict>", _toml.toml_document(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        path = os.fspath(scenario)
        if isinstance(path, str):
            return path, None
    raise TypeError(f"scenario must be a path (str or os.PathLike) or a dict of tables, got {type(scenario).__name__}")


def _sets(overrides, kw):
    """The ``--set KEY=VALUE`` strings and the ``--unset KEY`` keys (a value of None) from a dict of
    dotted keys and from keyword arguments, as the tuple the module takes."""
    items = []
    if overrides is not None:
        if not isinstance(overrides, Mapping):
            raise TypeError(f"overrides must be a dict of dotted keys to values, got {type(overrides).__name__}")
        items.extend(overrides.items())
    items.extend((key.replace("__", "."), value) for key, value in kw.items())
    sets = []
    unsets = []
    for key, value in items:
        if not isinstance(key, str) or not key:
            raise TypeError(f"override keys must be dotted key strings such as 'system.gpus', got {key!r}")
        if value is None:
            unsets.append(key)  # taken out of the scenario, so its default applies
        else:
            sets.append(f"{key}={_toml.toml_value(value, key)}")
    return sets, unsets


def _specs(specs):
    """The spec directories: GPUSIM_SPECS (colon-separated), then ``specs``, as in the CLI."""
    dirs = [d for d in os.environ.get("GPUSIM_SPECS", "").split(":") if d]
    if specs is None:
        return dirs
    if isinstance(specs, (str, os.PathLike)):
        specs = [specs]
    return dirs + [os.fspath(d) for d in specs]


def _names(value, what):
    """A list of names from a list or a comma-separated string."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")]
    if not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a list of strings or a comma-separated string")
    names = []
    for v in value:
        if not isinstance(v, str):
            raise TypeError(f"{what} must be strings, got {v!r}")
        if v:
            names.append(v)
    return names


def _optional_str(value, what):
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a string, got {type(value).__name__}")
    return value


def _int(value, what):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{what} must be an int, got {type(value).__name__}")
    return int(value)


# ---------------------------------------------------------------- the questions


def _variant(gpu_variant):
    """A GPU what-if dict as the module takes it: (bandwidth factor, clock factor, PCIe generation or 0)."""
    if gpu_variant is None:
        return (1.0, 1.0, 0)
    if not isinstance(gpu_variant, Mapping):
        raise TypeError(f"gpu_variant must be a dict, got {type(gpu_variant).__name__}")
    unknown = set(gpu_variant) - {"memory_bandwidth", "clock", "pcie_gen"}
    if unknown:
        raise ValueError(f"gpu_variant has no key {sorted(unknown)[0]!r}: it takes memory_bandwidth, clock and pcie_gen")
    gen = gpu_variant.get("pcie_gen")
    if gen is not None and (isinstance(gen, bool) or not isinstance(gen, int)):
        raise TypeError(f"gpu_variant pcie_gen must be an integer, got {gen!r}")
    return (float(gpu_variant.get("memory_bandwidth", 1.0)), float(gpu_variant.get("clock", 1.0)),
            0 if gen is None else gen)


def estimate(scenario, *, gpu=None, gpu_variant=None, overrides=None, specs=None, **kw):
    """The whole answer for one scenario: ``gpusim estimate SCENARIO --format json``.

    ``scenario``: a path or a dict of tables. ``gpu``: run on this GPU id instead of
    ``system.gpu`` (``--gpu``). ``gpu_variant``: a what-if of the GPU, ``{"memory_bandwidth": 2,
    "clock": 1.1, "pcie_gen": 5}`` (factors of its DRAM bandwidth and SM clock, a PCIe
    generation; docs/python.md). ``overrides`` and ``**kw``: scenario keys to override
    (``--set``). ``specs``: extra spec directories (``--specs``). Returns the report as a dict of
    sections (``report["step"]["time_s"]``); keys in docs/report.md.
    """
    path, text = _scenario(scenario)
    sets = _sets(overrides, kw)
    return json.loads(_gpusim.estimate(path, text, sets, _optional_str(gpu, "gpu"), _variant(gpu_variant),
                                       _specs(specs)))


def compare(scenario, gpus, *, overrides=None, specs=None, **kw):
    """One job on several GPUs, ranked: ``gpusim compare SCENARIO --gpus ... --format json``.

    ``gpus``: GPU ids, a list or a comma-separated string; each keeps the scenario's GPU count and
    layout. Returns one dict per GPU, best first (jobs that fit, then by time to finish; serving:
    those meeting the SLO, then by cost per million output tokens). A GPU the job cannot run on
    has a ``problem`` instead of figures; a job that runs on none of them raises ``InputError``
    with each GPU's reason, as the command line exits 2.
    """
    ids = _names(gpus, "gpus")
    path, text = _scenario(scenario)
    sets = _sets(overrides, kw)
    return json.loads(_gpusim.compare(path, text, sets, ids, _specs(specs)))


def compare_systems(scenario, systems, *, objective="time", overrides=None, specs=None, **kw):
    """One job on whole systems, each at its best layout:
    ``gpusim compare SCENARIO --systems ... --objective ... --format json``.

    ``systems``: a list or a comma-separated string of ``[NODES x] GPUS x ID`` ("2xrtx3090": one
    machine of two RTX 3090s). ``objective``: "time" or "cost". Returns a dict with the job's
    ``scenario`` words, the ``objective`` and ``systems``, one dict per system, best first, with
    its layout, purchase price, power, time, owned and cloud cost and break-even; a system the
    job cannot run on has a ``problem`` instead. Raises ``InputError`` when it runs on none.
    """
    names = _names(systems, "systems")
    if not isinstance(objective, str):
        raise TypeError(f"objective must be a string, got {objective!r}")
    path, text = _scenario(scenario)
    sets = _sets(overrides, kw)
    return json.loads(_gpusim.compare_systems(path, text, sets, names, objective, _specs(specs)))


def sweep(scenario, vary, *, overrides=None, specs=None, shard=None, client=None, shards=None, **kw):
    """A grid of scenario variants: ``gpusim sweep SCENARIO --vary KEY=V1,V2,...``.

    ``vary``: a dict of dotted keys to lists of values, e.g. ``{"system.gpus": [1, 2, 4],
    "training.micro_batch": [8, 16]}``; the grid is their product, first key fastest. Returns one
    flat dict per point, ready for ``pandas.DataFrame``: each axis value as given under its key,
    ``"status"`` (``"ok"``, or why the point cannot run), and, for points that ran, every report
    field under ``"section.key"`` (``"step.time_s"``, ``"inference.time_to_first_token_s"``;
    top-level keys such as ``"bottleneck"`` bare), ``None`` where the report has null: the
    columns of ``gpusim sweep --format csv`` with ``"vary."`` dropped from the axis keys. Where an
    axis key is also a report key (``"system.gpus"``) the row keeps the axis value, as given.
    Points that cannot run are rows, not errors; an invalid base scenario raises ``InputError``.

    ``shard=(I, N)``: only the points I, I + N, I + 2N, ... (``--shard I/N``); the N shards' rows,
    interleaved, are the whole grid. ``client``: a ``dask.distributed.Client``; the grid is split
    into ``shards`` shards (default: one per worker), each run on a worker through this module,
    and the rows are gathered back in grid order: the same list as without a client. A scenario
    given as a path and the ``specs`` directories must be readable at the same absolute paths on
    the workers (a shared file system, or one machine); a dict scenario travels with the work.
    """
    if client is not None and shard is not None:
        raise ValueError("give shard or client, not both: a client splits the grid into shards itself")
    if not isinstance(vary, Mapping):
        raise TypeError(f"vary must be a dict of dotted keys to lists of values, got {type(vary).__name__}")
    if not vary:
        raise ValueError("vary names no key")
    axes, given = [], []
    for key, values in vary.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"vary keys must be dotted key strings such as 'system.gpus', got {key!r}")
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, Iterable):
            values = [values]
        values = list(values)
        if not values:
            raise ValueError(f"vary {key}: no values")
        texts = [_toml.toml_value(v, key) for v in values]
        axes.append((key, texts))
        given.append(dict(reversed(list(zip(texts, values)))))  # TOML text -> the value as given
    job = (*_portable(scenario), _sets(overrides, kw), axes, given, _portable_dirs(_specs(specs)))
    if client is None:
        index, count = (0, 1) if shard is None else _shard(shard)
        return _sweep_rows(job, index, count)
    count = len(client.scheduler_info()["workers"]) if shards is None else _int(shards, "shards")
    if count < 1:
        raise ValueError(f"shards must be at least 1, got {count}")
    parts = client.gather(client.map(_sweep_rows, [job] * count, range(count), [count] * count, pure=False))
    # Shard I holds points I, I + N, ...: its j-th row is point I + j * N.
    rows = [None] * sum(len(part) for part in parts)
    for index, part in enumerate(parts):
        rows[index::count] = part
    return rows


def _shard(shard):
    """(I, N) from a pair of ints, checked: 0 <= I < N."""
    if isinstance(shard, (str, bytes)) or not isinstance(shard, Iterable):
        raise TypeError(f"shard must be a pair (I, N) of ints, got {shard!r}")
    pair = list(shard)
    if len(pair) != 2:
        raise TypeError(f"shard must be a pair (I, N) of ints, got {shard!r}")
    index, count = _int(pair[0], "shard index"), _int(pair[1], "shard count")
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"shard must be (I, N) with 0 <= I < N, got ({index}, {count})")
    return index, count


def _portable(scenario):
    """(path, text) as a worker elsewhere can use it: a file by its absolute path."""
    path, text = _scenario(scenario)
    return (path, text) if text is not None else (os.path.abspath(path), None)


def _portable_dirs(dirs):
    return [os.path.abspath(d) for d in dirs]


def _sweep_rows(job, index, count):
    """The rows of shard ``index`` of ``count`` of a resolved sweep (runs where the work is sent)."""
    path, text, sets, axes, given, dirs = job
    rows = []
    for point in _gpusim.sweep(path, text, sets, axes, dirs, index, count):
        row = {key: given[i][v] for i, ((key, _), v) in enumerate(zip(axes, point["values"]))}
        row["status"] = point["status"]
        for key, value in point["fields"].items():
            row.setdefault(key, value)  # an axis value stays as given (an int, not the report's float)
        rows.append(row)
    return rows


def plan(scenario, *, gpu=None, objective="time", top=10, max_gpus=0, formats=None, overrides=None, specs=None,
         **kw):
    """The best layouts for a job: ``gpusim plan SCENARIO --format json``.

    Training scenarios: every valid parallel layout ranked by time to train (``objective="time"``)
    or cloud cost (``"cost"``); the report of docs/report.md's plan section. Serving scenarios: the
    deployments (GPU count, layout, weight format, batch limit) that meet the scenario's SLO,
    ranked by output tokens/s per GPU or cost per million output tokens, with the frontier.
    ``top``: rows to keep. ``max_gpus``: also search GPU counts up to this. ``formats`` (serving
    only): weight formats to try, a list or a comma-separated string. ``gpu``: plan on this GPU id
    instead of ``system.gpu`` (``--gpu``).
    """
    return _plan_job(_plan_resolved(scenario, gpu, objective, top, max_gpus, formats, overrides, specs, **kw))


def _plan_job(job):
    """A resolved plan question, answered (runs where the work is sent)."""
    return json.loads(_gpusim.plan(*job))


def _plan_resolved(scenario, gpu=None, objective="time", top=10, max_gpus=0, formats=None, overrides=None, specs=None,
                   **kw):
    """plan()'s checks (the command line's: one function makes them), then the question as a job
    any process can answer."""
    if not isinstance(objective, str):
        raise TypeError(f"objective must be a string, got {type(objective).__name__}")
    top = _int(top, "top")
    max_gpus = _int(max_gpus, "max_gpus")
    names = [] if formats is None else _names(formats, "formats")
    _gpusim.plan_check(objective, top, max_gpus, names)
    return (*_portable(scenario), _sets(overrides, kw), _optional_str(gpu, "gpu"), objective, top, max_gpus, names,
            _portable_dirs(_specs(specs)))


def plan_many(scenarios, *, client=None, **common):
    """plan() for many questions: a list of answers in the order of ``scenarios``.

    Each item of ``scenarios`` is a scenario (path or dict), asked with the ``common`` arguments of
    plan(), or a pair ``(scenario, dict)`` whose dict adds to or replaces them for that item
    (``("llama.toml", {"max_gpus": 8, "slo__tpot": "40 ms"})``). Every question is checked before
    any is answered. ``client``: a ``dask.distributed.Client``; each question is answered on a
    worker through this module and the answers gathered in order, equal to those without a client
    (paths and spec directories must be readable at the same absolute paths on the workers).
    """
    jobs = []
    for item in scenarios:
        if isinstance(item, tuple):
            if len(item) != 2 or not isinstance(item[1], Mapping):
                raise TypeError("an item of scenarios is a scenario or a pair (scenario, dict of plan arguments)")
            scenario, own = item
            args = {**common, **own}
        else:
            scenario, args = item, dict(common)
        jobs.append(_plan_resolved(scenario, **args))
    if client is None:
        return [_plan_job(job) for job in jobs]
    return client.gather(client.map(_plan_job, jobs, pure=False))


def roofline(gpu=None, scenario=None, *, gpus=None, dtype=None, gpu_variant=None, overrides=None, specs=None, **kw):
    """The roofline of a GPU: ``gpusim roofline --gpu ID [SCENARIO] --format json``.

    The GPU's DRAM and L2 roofs and compute roof per dtype, the ridge point, and, with a scenario,
    each op of its step at its arithmetic intensity and attained rate. ``gpu`` may be left out
    when a scenario is given (its GPU is used); given with one, it replaces ``system.gpu``.
    ``gpus``: several GPU ids, their roofs only, as a list of rooflines (``--gpus``).
    ``dtype``: the roof highlighted (default ``"bf16"``, or ``"fp16"`` on a GPU without bf16).
    ``gpu_variant``: a what-if of the one GPU, as for ``estimate``.
    The checks and defaults are the command line's (one function serves both).
    """
    gpu = _optional_str(gpu, "gpu")
    dtype = None if dtype is None else _optional_str(dtype, "dtype")
    if gpus is None:
        gpus = []
    elif isinstance(gpus, str) or not all(isinstance(g, str) and g for g in gpus):
        raise ValueError("gpus must be a list of GPU ids, got %r" % (gpus,))
    if scenario is None:
        path, text = None, None
    else:
        path, text = _scenario(scenario)
    sets = _sets(overrides, kw)
    return json.loads(_gpusim.roofline(gpu, list(gpus), path, text, sets, dtype, _variant(gpu_variant),
                                       _specs(specs)))


def breakeven(scenario, *, gpu=None, gpu_variant=None, overrides=None, specs=None, **kw):
    """Owning against renting across utilization: ``gpusim breakeven SCENARIO --format json``.

    The cost of a busy hour owned (hardware share over the lifetime plus electricity) against
    renting the same work, at each utilization, and the crossover. ``gpu`` replaces
    ``system.gpu``.
    """
    path, text = _scenario(scenario)
    sets = _sets(overrides, kw)
    return json.loads(_gpusim.breakeven(path, text, sets, _optional_str(gpu, "gpu"), _variant(gpu_variant),
                                        _specs(specs)))


def _paths(value, what):
    if isinstance(value, (str, os.PathLike)):
        value = [value]
    try:
        paths = [os.fspath(v) for v in value]
    except TypeError:
        raise TypeError(f"{what} must be a path or a list of paths, got {type(value).__name__}") from None
    if not paths:
        raise ValueError(f"{what} needs at least one measurement file or directory")
    return paths


def validate(measurements, *, role="all", cross_validate=False, specs=None):
    """Predicted against measured: ``gpusim validate MEASUREMENTS --format json``.

    ``measurements``: a measurement file or directory, or a list of them. ``role``: ``"check"``,
    ``"fit"`` or ``"all"`` rows. With ``cross_validate``, each publication's rows are predicted with
    every value fitted on it taken back (``--cross-validate``). The report of docs/report.md.
    """
    if not isinstance(role, str):
        raise TypeError(f"role must be a string, got {type(role).__name__}")
    return json.loads(_gpusim.validate(_paths(measurements, "measurements"), role, bool(cross_validate),
                                       _specs(specs)))


def calibrate(measurements, *, specs=None):
    """Efficiency parameters fitted on the ``fit`` rows: ``gpusim calibrate MEASUREMENTS -o DIR``.

    Returns ``files`` (each overlay file's path under DIR to its text: write them under a folder
    and pass it as ``specs``), ``report`` (the command's text), and ``before``/``after``, the
    validation reports under the specs given and with the overlay.
    """
    out = _gpusim.calibrate(_paths(measurements, "measurements"), _specs(specs))
    out["before"] = json.loads(out["before"])
    out["after"] = json.loads(out["after"])
    return out


def import_model(config, *, specs=None):
    """A Hugging Face ``config.json`` as a model spec file's text: ``gpusim model import CONFIG``.

    Save it as ``DIR/models/ID.toml``; ``specs=[DIR]`` then loads it as preset ``ID``.
    """
    return _gpusim.import_model(os.fspath(config), _specs(specs))


def init(kind):
    """A commented scenario to start from, ``"training"`` or ``"serving"``: ``gpusim init KIND``."""
    if not isinstance(kind, str):
        raise TypeError(f"kind must be a string, got {type(kind).__name__}")
    return _gpusim.init(kind)


def specs(kind=None, *, specs=None):
    """The catalog's ids: ``gpusim specs list``.

    Without ``kind``, a dict of every kind (``"gpus"``, ``"links"``, ``"models"``, ``"arch"``,
    ``"runtimes"``, ``"comm"``) to its sorted ids; with one, that kind's list. ``specs``: extra
    spec directories, as elsewhere.
    """
    dirs = _specs(specs)
    if kind is None:
        return {k: _gpusim.spec_ids(k, dirs) for k in _SPEC_KINDS}
    if kind not in _SPEC_KINDS:
        raise ValueError(f"kind must be one of {', '.join(_SPEC_KINDS)}, got {kind!r}")
    return _gpusim.spec_ids(kind, dirs)


def gpu(id, *, specs=None):
    """The main figures of one GPU spec, in SI units (docs/python.md lists the keys).

    ``peak_flops`` maps each dtype the GPU computes in to its dense peak in FLOP/s; sizes are in
    bytes, bandwidths in bytes/s, power in watts, prices in USD (the cloud rate per GPU-hour).
    """
    if not isinstance(id, str):
        raise TypeError(f"id must be a string, got {type(id).__name__}")
    return _gpusim.gpu(id, _specs(specs))
