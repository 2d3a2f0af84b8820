"""Python values as TOML text: the scenario dicts and override values of the gpusim package, in the
form the library reads (a scenario's text, ``--set KEY=VALUE``'s value)."""

import math
import numbers
import re
from collections.abc import Mapping

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _toml_string(s):
    out = []
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _toml_key(key, where):
    if not isinstance(key, str) or not key:
        raise TypeError(f"{where}: keys must be non-empty strings, got {key!r}")
    return key if _BARE_KEY.match(key) else _toml_string(key)


def toml_value(value, where):
    """A value as TOML text (what ``--set KEY=VALUE`` takes after the ``=``)."""
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):
        value = value.tolist()  # numpy scalars and arrays, e.g. from a DataFrame column
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return repr(f)  # always has "." or "e": TOML reads it as a float
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, Mapping):
        items = ", ".join(f"{_toml_key(k, where)} = {toml_value(v, f'{where}.{k}')}" for k, v in value.items())
        return "{ " + items + " }" if items else "{}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, where) for v in value) + "]"
    raise TypeError(f"{where}: a {type(value).__name__} has no TOML form (use str, int, float, bool, list or dict)")


def _is_table_array(value):
    return isinstance(value, (list, tuple)) and len(value) > 0 and all(isinstance(v, Mapping) for v in value)


def toml_document(tables):
    """A scenario dict (tables as nested dicts, arrays of tables as lists of dicts) as TOML text."""
    lines = []

    def emit(table, path, header):
        plain, subtables, arrays = [], [], []
        for key, value in table.items():
            where = ".".join(path + [str(key)])
            _toml_key(key, where)
            if isinstance(value, Mapping):
                subtables.append((key, value))
            elif _is_table_array(value):
                arrays.append((key, value))
            elif value is None:
                raise TypeError(f"{where}: None has no TOML form (leave the key out)")
            else:
                plain.append((key, value))
        # A table with only sub-tables needs no header of its own; an empty one does, to exist.
        if header is not None and (plain or not (subtables or arrays) or header.startswith("[[")):
            lines.append(header)
        for key, value in plain:
            lines.append(f"{_toml_key(key, '')} = {toml_value(value, '.'.join(path + [key]))}")
        for key, value in subtables:
            sub = path + [key]
            emit(value, sub, "[" + ".".join(_toml_key(k, "") for k in sub) + "]")
        for key, values in arrays:
            sub = path + [key]
            for value in values:
                emit(value, sub, "[[" + ".".join(_toml_key(k, "") for k in sub) + "]]")

    emit(tables, [], None)
    return "\n".join(lines) + "\n"
