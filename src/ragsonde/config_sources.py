"""Where settings come from, in order, and which layer gave each value.

The layers, highest first (one documented precedence for every command, route and call):

1. a call's arguments or a command's flags (``Settings(search=…)``, ``--hnsw-ef 128``);
2. the environment (``RAGSONDE_SEARCH__HNSW_EF=128``; the deprecated flat ``RAGSONDE_HNSW_EF``
   below the nested name);
3. the config file (``ragsonde.toml``, ``--config FILE``, ``RAGSONDE_CONFIG``): ``[search]`` and
   ``[index]`` tables;
4. the defaults.

Each layer is normalised before the layers are merged: a flat name of a search or index parameter
(``mode``, ``hnsw_ef``, ``bm25_k1``, … as ragsonde 0.1 spelled them) moves into its table with a
:class:`FlatNameWarning`, and a parameter model handed in as an argument counts only the fields it
sets, so an unset field keeps inheriting from the layers below. :func:`origins` answers "where did
this value come from?" for ``ragsonde config``, as ``git config --show-origin`` does.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, TomlConfigSettingsSource

from ragsonde.models.params import IndexParams, SearchParams

__all__ = [
    "DEPRECATED_FLAT",
    "ENV_PREFIX",
    "FlatNameWarning",
    "Origin",
    "nest_flat",
    "origins",
    "setting_sources",
    "shown",
]

ENV_PREFIX = "RAGSONDE_"

#: ragsonde 0.1's flat names -> the table that holds them now (same name inside it).
DEPRECATED_FLAT: dict[str, str] = {
    **{name: "search" for name in SearchParams.model_fields if name != "top_k"},
    **{name: "index" for name in IndexParams.model_fields},
}


class FlatNameWarning(FutureWarning):
    """A flat setting name (``mode``, ``RAGSONDE_HNSW_EF``) that moved into a table; it works
    for this release and will be removed in the next."""


def _warn_flat(name: str, table: str, where: str) -> None:
    warnings.warn(
        f"The setting '{name}' ({where}) is now '{table}.{name}': write "
        f"[{table}] {name} = … in ragsonde.toml, or {ENV_PREFIX}{table.upper()}__{name.upper()} "
        "in the environment. The flat name still works in this release only.",
        FlatNameWarning,
        stacklevel=4,
    )


def _set_fields(value: Any) -> Any:
    """A parameter model as the dict of the fields it sets (so unset fields inherit)."""
    return value.set_fields() if isinstance(value, SearchParams | IndexParams) else value


def nest_flat(data: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``data`` with deprecated flat names moved into their tables (a flat name given beside
    its table wins: ``Settings(**{**s.model_dump(), "mode": "hybrid"})`` means hybrid) and
    parameter models as dicts of the fields they set."""
    out = {k: _set_fields(v) for k, v in data.items() if k not in DEPRECATED_FLAT}
    for name, value in data.items():
        table = DEPRECATED_FLAT.get(name)
        if table is None or value is None:
            continue
        _warn_flat(name, table, where)
        nested = out.get(table)
        nested = dict(nested) if isinstance(nested, Mapping) else {}
        nested[name] = value  # named on purpose in this layer: more specific than the table
        out[table] = nested
    return out


class _Layer(PydanticBaseSettingsSource):
    """Another source's values, normalised with :func:`nest_flat`."""

    def __init__(self, inner: PydanticBaseSettingsSource, where: str) -> None:
        super().__init__(inner.settings_cls)
        self.inner = inner
        self.where = where

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads the inner source whole

    def __call__(self) -> dict[str, Any]:
        return nest_flat(self.inner(), self.where)


class _FileLayer(_Layer):
    """The config file's values: a key no setting has (``colection``) is refused, naming the
    closest one, instead of being ignored with its default used."""

    def __call__(self) -> dict[str, Any]:
        from ragsonde.models.keys import check_keys

        data = self.inner()
        check_keys(
            {str(k).lower(): v for k, v in data.items()},
            _file_keys(self.settings_cls),
            f"The config file {self.where}",
            "config",
            listed=self.settings_cls.model_fields,
        )
        return nest_flat(data, self.where)


def _file_keys(settings_cls: type[BaseSettings]) -> set[str]:
    """What a config file may name at its top: each setting, its aliases, the flat names."""
    keys = set(settings_cls.model_fields) | set(DEPRECATED_FLAT)
    for field in settings_cls.model_fields.values():
        alias = getattr(field, "validation_alias", None)
        keys |= {c.lower() for c in getattr(alias, "choices", []) if isinstance(c, str)}
    return keys


def _env_value(raw: str) -> Any:
    """An environment value as the nested env source reads one: JSON where it is JSON."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # not JSON; nested deeper than the parser goes
        return raw


class _FlatEnv(PydanticBaseSettingsSource):
    """The deprecated flat environment names (``RAGSONDE_MODE``), below the nested ones."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        out: dict[str, dict[str, Any]] = {}
        env = {k.upper(): v for k, v in os.environ.items()}
        for name, table in DEPRECATED_FLAT.items():
            var = f"{ENV_PREFIX}{name.upper()}"
            if var in env:
                _warn_flat(name, table, f"the environment variable {var}")
                out.setdefault(table, {})[name] = _env_value(env[var])
        return dict(out)


def setting_sources(
    settings_cls: type[BaseSettings],
    init_settings: PydanticBaseSettingsSource,
    env_settings: PydanticBaseSettingsSource,
    config_file: Path,
) -> tuple[PydanticBaseSettingsSource, ...]:
    """The layers of :class:`~ragsonde.config.Settings`, highest first."""
    return (
        _Layer(init_settings, "a keyword argument"),
        env_settings,
        _FlatEnv(settings_cls),
        _FileLayer(TomlConfigSettingsSource(settings_cls, toml_file=config_file), str(config_file)),
    )


@dataclass(frozen=True)
class Origin:
    """One effective setting and the layer that gave it."""

    key: str
    """Dotted: ``search.hnsw_ef``, ``collection``."""
    value: Any
    source: str
    """``default``, ``file``, ``env`` or ``flag``."""
    where: str | None = None
    """The file's path or the variable's name."""


def _flatten(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in data.items():
        if isinstance(value, Mapping) and key in ("search", "index"):
            yield from _flatten(value, f"{key}.")
        else:
            yield prefix + key, value


def _env_names(settings_cls: type[BaseSettings], key: str) -> list[str]:
    """The variables that may carry ``key``: its nested name, its flat (deprecated) name and
    the field's own aliases (``QDRANT_URL``)."""
    if "." in key:
        table, name = key.split(".", 1)
        return [f"{ENV_PREFIX}{table.upper()}__{name.upper()}", f"{ENV_PREFIX}{name.upper()}"]
    field = settings_cls.model_fields.get(key)
    names = [f"{ENV_PREFIX}{key.upper()}"]
    alias = getattr(field, "validation_alias", None)
    names += [c.upper() for c in getattr(alias, "choices", []) if isinstance(c, str)]
    return names


def origins(
    settings: BaseSettings,
    flags: Mapping[str, Any],
    config_file: Path,
) -> list[Origin]:
    """Each effective value of ``settings`` and where it came from (``flags``: the call's own
    overrides; ``config_file``: the file that was read)."""
    cls = type(settings)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FlatNameWarning)
        from_file = dict(
            _flatten(
                _Layer(TomlConfigSettingsSource(cls, toml_file=config_file), "")()
                if config_file.is_file()
                else {}
            )
        )
        from_flags = dict(_flatten(nest_flat(flags, "")))
    env = {k.upper() for k in os.environ}
    effective = settings.model_dump()
    out: list[Origin] = []
    for key, value in _flatten(effective):
        if key in from_flags:
            out.append(Origin(key, value, "flag"))
            continue
        var = next((n for n in _env_names(cls, key) if n in env), None)
        if var is None and "." not in key:  # a table's own keys: RAGSONDE_MAPPING__TEXT
            nested = sorted(n for n in env if n.startswith(f"{ENV_PREFIX}{key.upper()}__"))
            var = ", ".join(nested) or None  # it said "default" for a mapping set there
        if var is not None:
            out.append(Origin(key, value, "env", var))
        elif key in from_file:
            out.append(Origin(key, value, "file", str(config_file)))
        else:
            out.append(Origin(key, value, "default"))
    return out


#: What a secret setting shows instead of its value.
MASK = "********"


def shown(value: Any) -> Any:
    """A setting's value as ``ragsonde config`` shows it: secrets masked, paths as text."""
    if isinstance(value, SecretStr):
        return MASK if value.get_secret_value() else ""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, tuple | list):
        return [shown(v) for v in value]
    return value
