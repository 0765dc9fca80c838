"""One way to open a run, for both front doors: a :class:`RunConfig` (built from a pytest run's
options or from a command's arguments) and :func:`open_run`, which builds what answers —
the embedded server when a model needs it, the response caches (a local folder, a shared
Redis cache behind it) and the evaluator — and checks it before any call.

The options both doors share are parsed here once: ``--llm-param`` values, the
``--llm-config`` aliases and ``--llm-router`` groups, the cache (a folder, ``off`` or a
``redis://`` URL with a local layer in front), ``auto`` seeds. A bad value raises
ReasoningError in one line naming the option; each door says it its own way (a pytest
usage error, the command's error line)."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .errors import InvalidArgument, ReasoningError, quote

if TYPE_CHECKING:  # imported when a run opens: the door reads only the parsers here
    from .evaluate import EvalConfig, Evaluator
    from .models.kinds import Model

__all__ = [
    "CACHE_DEFAULT",
    "OpenRun",
    "RunConfig",
    "cache_disabled",
    "check_params",
    "load_model_specs",
    "open_run",
    "parse_cache",
    "parse_seed",
]

CACHE_DEFAULT = ".reasoning_cache"


def cache_disabled(value: str) -> bool:
    """Whether a cache option's value turns the cache off."""
    return value.lower() in ("off", "none", "0")


def parse_cache(
    cache: str,
    local: str | None = None,
    *,
    root: Path | None = None,
    flag: str = "--reasoning-cache",
    local_flag: str = "--reasoning-cache-local",
) -> tuple[Path | None, str | None]:
    """A cache option: a folder (relative to ``root``), ``off``, or a Redis URL with the local
    layer ``local`` in front of it (default ``.reasoning_cache``; ``off``: Redis alone).
    Returns (the folder or None, the checked URL or None)."""
    from .models.shared_cache import check_redis_url, is_redis_url

    base = root or Path()
    if not is_redis_url(cache):
        if local is not None:
            raise ReasoningError(
                f"{local_flag}: only with a shared cache ({flag} redis://HOST:PORT/DB); the "
                f"cache here is {cache!r}"
            )
        return (None if cache_disabled(cache) else base / cache), None
    try:
        url = check_redis_url(cache)
    except InvalidArgument as exc:
        raise ReasoningError(f"{flag}: {exc}") from None
    local = local if local is not None else CACHE_DEFAULT
    return (None if cache_disabled(local) else base / local), url


def parse_seed(raw: str) -> tuple[int, str | None]:
    """A seed option: an integer, or ``auto[:TEXT]`` → a seed derived from TEXT (default
    today's UTC date); returns the seed and the text it came from."""
    from .rng import SEED_FORMS, resolve_seed

    try:
        return resolve_seed(str(raw))
    except ValueError:
        given = quote(str(raw).strip())
        raise ReasoningError(f"--reasoning-seed: {SEED_FORMS}, got {given}") from None


def check_params(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """``--llm-param`` values: no secrets on the command line, nothing the run sets itself."""
    from .models.endpoints import check_param

    params: dict[str, Any] = {}
    for name, value in pairs:
        try:
            check_param(name, value)
        except InvalidArgument as exc:
            raise ReasoningError(f"--llm-param {exc}") from None
        params[name] = value
    return params


def load_model_specs(
    llm_config: str | None, llm_router: str | None = None
) -> dict[str, Any]:
    """The ``--llm-config`` aliases and ``--llm-router`` groups by name (a name in both is
    refused); each problem one line naming its option and file."""
    specs: dict[str, Any] = {}
    groups: dict[str, Any] = {}
    if llm_config:
        from .models.endpoints import load_model_list

        try:
            specs = dict(load_model_list(llm_config))
        except InvalidArgument as exc:
            raise ReasoningError(f"--llm-config {exc}") from None
    if llm_router:
        from .models.router import load_router_groups

        try:
            groups = dict(load_router_groups(llm_router))
        except InvalidArgument as exc:
            raise ReasoningError(f"--llm-router {exc}") from None
    for name in groups:
        if name in specs:
            raise ReasoningError(
                f"--llm-router {llm_router}: model group {name!r} is also an alias of "
                f"--llm-config {llm_config}: rename one"
            )
    return {**specs, **groups}


class _PytestOptions(Protocol):
    """What a pytest run's options (``plugin.options.RunOptions``) hold for a RunConfig."""

    @property
    def api_base(self) -> str | None: ...
    @property
    def params(self) -> dict[str, Any]: ...
    @property
    def model_specs(self) -> dict[str, Any]: ...
    @property
    def cache_dir(self) -> Path | None: ...
    @property
    def cache_url(self) -> str | None: ...
    @property
    def concurrency(self) -> int: ...
    @property
    def timeout_s(self) -> float: ...
    @property
    def retries(self) -> int: ...
    @property
    def lenient(self) -> bool: ...


@dataclass(frozen=True)
class RunConfig:
    """What answers a run's models: endpoint settings, aliases, caches, limits."""

    models: tuple[str, ...]
    api_base: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    model_specs: Mapping[str, Any] = field(default_factory=dict)  # aliases, router groups
    cache_dir: Path | None = Path(CACHE_DEFAULT)
    cache_url: str | None = None  # a shared cache on Redis, behind cache_dir
    concurrency: int = 8
    timeout_s: float = 120.0
    attempts: int = 5
    lenient: bool = False

    @classmethod
    def from_options(cls, models: Sequence[str], options: _PytestOptions) -> RunConfig:
        """A pytest run's (``plugin.options.RunOptions``, already checked)."""
        return cls(
            models=tuple(models),
            api_base=options.api_base,
            params=dict(options.params),
            model_specs=dict(options.model_specs),
            cache_dir=options.cache_dir,
            cache_url=options.cache_url,
            concurrency=options.concurrency,
            timeout_s=options.timeout_s,
            attempts=options.retries,
            lenient=options.lenient,
        )

    @classmethod
    def from_args(cls, models: Sequence[str], args: argparse.Namespace) -> RunConfig:
        """A command's (``cli``: ``--llm-api-base``, ``--llm-param``, ``--llm-config``,
        ``--cache`` and ``--cache-local``, ``--timeout``), checked here."""
        params = check_params(getattr(args, "llm_param", ()) or ())
        specs = load_model_specs(getattr(args, "llm_config", None))
        timeout = float(getattr(args, "timeout", 120.0))
        if not timeout > 0 or timeout == float("inf"):
            raise ReasoningError(f"--timeout: expected a positive number of seconds, got {timeout}")
        cache_dir, cache_url = parse_cache(
            getattr(args, "cache", CACHE_DEFAULT),
            getattr(args, "cache_local", None),
            flag="--cache",
            local_flag="--cache-local",
        )
        return cls(
            models=tuple(models),
            api_base=getattr(args, "llm_api_base", None),
            params=params,
            model_specs=specs,
            cache_dir=cache_dir,
            cache_url=cache_url,
            timeout_s=timeout,
        )

    def resolved(self) -> list[Model]:
        """Its models, each resolved with its aliases (kind, entry, price)."""
        from .models.kinds import resolve

        return [resolve(m, self.model_specs) for m in self.models]

    def eval_config(self, local_url: str | None, local_identity: str | None) -> EvalConfig:
        from .evaluate import EvalConfig

        return EvalConfig(
            api_base=self.api_base,
            params=dict(self.params),
            cache_dir=str(self.cache_dir) if self.cache_dir is not None else None,
            cache_url=self.cache_url,
            concurrency=self.concurrency,
            timeout_s=self.timeout_s,
            attempts=self.attempts,
            local_url=local_url,
            local_identity=local_identity,
            models=dict(self.model_specs),
            lenient=self.lenient,
        )


@dataclass
class OpenRun:
    """An opened run: its evaluator (caches opened on first use) and the embedded server
    it started, if any. Close it once (it stops the server)."""

    config: RunConfig
    evaluator: Evaluator
    local_server: Any = None
    local_url: str | None = None
    local_identity: str | None = None

    def close(self) -> None:
        self.evaluator.close()
        if self.local_server is not None:
            self.local_server.stop()
            self.local_server = None

    def __enter__(self) -> OpenRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_run(
    config: RunConfig,
    *,
    local: tuple[str | None, str | None] | None = None,
    verify: bool = True,
    deep: bool = True,
    starting: Callable[[], None] | None = None,
) -> OpenRun:
    """Build what answers ``config.models``: the embedded server when one of them needs it
    (unless ``local`` gives its address and identity: an xdist worker's, from its
    controller), the evaluator with its caches, and — ``verify`` — litellm, the cache folder
    and file (``deep``: every page read once) and a shared cache, before any call. Raises
    ReasoningError (StorageFailed for the caches) in one line; nothing is left open then.
    ``starting`` is called just before the embedded server starts (it takes seconds)."""
    from .evaluate import Evaluator

    url, identity = local or (None, None)
    server = None
    wanted = [m.name for m in config.resolved() if m.api.needs_local_server]
    if wanted and local is None:
        from .models.local import LocalServer  # xllamacpp: the [local] extra only

        if starting is not None:
            starting()
        try:  # the model file is looked for as the server is made: its hint names the model
            server = LocalServer()
            url = server.start()
        except ReasoningError as exc:
            if server is not None:
                server.stop()  # a child that started and then failed is not left running
            raise ReasoningError(f"--llm {wanted[0]}: {exc}") from None
        except BaseException:
            if server is not None:
                server.stop()
            raise
        identity = server.identity
    opened = OpenRun(config, Evaluator(config.eval_config(url, identity)), server, url, identity)
    if verify:
        try:
            opened.evaluator.verify(config.models, deep=deep)
        except BaseException:
            with contextlib.suppress(Exception):
                opened.close()
            raise
    return opened
