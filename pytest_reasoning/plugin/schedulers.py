"""``--reasoning-shard``'s value: ``K/N``, or ``auto`` — the job's index and count read from
the engine that started it, mapped onto the same ``K/N`` (1-based K), so a scheduler's job i
runs exactly the items ``--reasoning-shard i+1/N`` runs.

Read: Kubernetes Indexed Jobs (``JOB_COMPLETION_INDEX``, 0-based; the Job's ``completions`` is in
no variable, so it is given once as ``auto/N``), SLURM job arrays (``SLURM_ARRAY_TASK_ID`` with
``SLURM_ARRAY_TASK_MIN``/``MAX``, a contiguous range of step 1, or ``SLURM_ARRAY_TASK_COUNT``
alone for ids from 0), GitLab ``parallel:`` (``CI_NODE_INDEX``, 1-based, ``CI_NODE_TOTAL``),
CircleCI (``CIRCLE_NODE_INDEX``, 0-based, ``CIRCLE_NODE_TOTAL``) and Buildkite
(``BUILDKITE_PARALLEL_JOB``, 0-based, ``BUILDKITE_PARALLEL_JOB_COUNT``). None set, two that
disagree, a value that is no count: one line (:class:`ShardRefused`), never a guess."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["MAX_SHARDS", "AutoShard", "ShardRefused", "from_env", "parse_shard"]

# --reasoning-shard K/N: more shards than this are not CI jobs but a typo.
MAX_SHARDS = 1_000


_Reader = Callable[[Mapping[str, str], "int | None"], tuple[int, int, str]]


class ShardRefused(ValueError):
    """A value of ``--reasoning-shard`` that names no shard; ``str(exc)`` is one line."""


@dataclass(frozen=True)
class AutoShard:
    """What ``auto`` read: shard ``index`` (1-based) of ``count``, and from where."""

    index: int
    count: int
    source: str  # e.g. "SLURM array (SLURM_ARRAY_TASK_ID=4, SLURM_ARRAY_TASK_MIN=3, ...)"

    def line(self) -> str:
        shard = f"{self.index}/{self.count}"
        return f"reasoning: shard {shard} (--reasoning-shard auto) from {self.source}"


def _int(env: Mapping[str, str], name: str) -> int:
    """A variable's value as a non-negative integer (digits only: ``+1``, ``1.0``, ``0x1``
    and 40-digit numbers are no index)."""
    raw = env[name].strip()
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise ShardRefused(
            f"--reasoning-shard auto: {name}={_shown(env[name])} is not a non-negative integer"
        )
    return int(raw)


def _shown(value: str) -> str:
    """A variable's value for a line: digits as they are, anything else quoted and clipped
    (an environment can hold control characters)."""
    from ..errors import quote

    plain = value.strip()
    return plain if plain.isascii() and plain.isdigit() and len(plain) <= 18 else quote(value, 30)


def _named(env: Mapping[str, str], *names: str) -> str:
    return ", ".join(f"{n}={_shown(env[n])}" for n in names if n in env)


def _kubernetes(env: Mapping[str, str], count: int | None) -> tuple[int, int, str]:
    name = "JOB_COMPLETION_INDEX"
    if count is None:
        raise ShardRefused(
            f"--reasoning-shard auto: {name} is set (a Kubernetes Indexed Job) but no variable "
            "gives the Job's completions: use --reasoning-shard auto/N, N its completions"
        )
    return _int(env, name), count, "Kubernetes Indexed Job"


def _slurm(env: Mapping[str, str], count: int | None) -> tuple[int, int, str]:
    task = _int(env, "SLURM_ARRAY_TASK_ID")
    step = _int(env, "SLURM_ARRAY_TASK_STEP") if "SLURM_ARRAY_TASK_STEP" in env else 1
    total = _int(env, "SLURM_ARRAY_TASK_COUNT") if "SLURM_ARRAY_TASK_COUNT" in env else None
    if "SLURM_ARRAY_TASK_MIN" in env and "SLURM_ARRAY_TASK_MAX" in env:
        low, high = _int(env, "SLURM_ARRAY_TASK_MIN"), _int(env, "SLURM_ARRAY_TASK_MAX")
        span = high - low + 1
        # --array=0,2,5 or 0-8:2 is no range of consecutive ids: index = id - min would leave
        # gaps (shards that never run), so it is refused rather than guessed.
        if step != 1 or span < 1 or (total is not None and total != span):
            raise ShardRefused(
                "--reasoning-shard auto: the SLURM array is not one range of consecutive ids "
                f"({_named(env, *_SLURM[1:], 'SLURM_ARRAY_TASK_STEP', 'SLURM_ARRAY_TASK_COUNT')}): "
                "use --array=0-(N-1)"
            )
        return task - low, span, "SLURM array"
    if total is None:
        raise ShardRefused(
            "--reasoning-shard auto: SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT "
            "or SLURM_ARRAY_TASK_MIN/MAX"
        )
    return task, total, "SLURM array"


def _pair(index: str, total: str, base: int, what: str) -> _Reader:
    def read(env: Mapping[str, str], count: int | None) -> tuple[int, int, str]:
        del count  # only a Kubernetes Job needs it
        if total not in env:
            raise ShardRefused(f"--reasoning-shard auto: {index} is set without {total}")
        return _int(env, index) - base, _int(env, total), what

    return read


_SLURM = ("SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX")
# (the variable whose presence names the scheduler, the variables shown, the reader)
_SCHEDULERS: tuple[tuple[str, tuple[str, ...], _Reader], ...] = (
    ("JOB_COMPLETION_INDEX", ("JOB_COMPLETION_INDEX",), _kubernetes),
    ("SLURM_ARRAY_TASK_ID", (*_SLURM, "SLURM_ARRAY_TASK_COUNT"), _slurm),
    ("CI_NODE_INDEX", ("CI_NODE_INDEX", "CI_NODE_TOTAL"),
     _pair("CI_NODE_INDEX", "CI_NODE_TOTAL", 1, "GitLab parallel")),
    ("CIRCLE_NODE_INDEX", ("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL"),
     _pair("CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0, "CircleCI parallelism")),
    ("BUILDKITE_PARALLEL_JOB", ("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT"),
     _pair("BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0, "Buildkite parallelism")),
)  # fmt: skip
_PREFIXES = ("JOB_COMPLETION_", "SLURM_ARRAY_", "CI_NODE_", "CIRCLE_NODE_", "BUILDKITE_PARALL")
VARIABLES = ", ".join(key for key, _, _ in _SCHEDULERS)


def from_env(env: Mapping[str, str], count: int | None = None) -> AutoShard:
    """``--reasoning-shard auto`` (``count``: the N of ``auto/N``) read from ``env``: every
    scheduler whose variable is set must name the same shard, each within 1..N."""
    # An empty variable is an unset one (a container that passes every name through).
    env = {k: v for k, v in env.items() if k.startswith(_PREFIXES) and v.strip()}
    found: list[AutoShard] = []
    for key, shown, read in _SCHEDULERS:
        if key not in env:
            continue
        index0, total, what = read(env, count)
        source = f"{what} ({_named(env, *shown)})"
        if not 1 <= total <= MAX_SHARDS or not 0 <= index0 < total:
            raise ShardRefused(
                f"--reasoning-shard auto: {source} names job {index0 + 1} of {total}: out of "
                f"range (1 <= K <= N <= {MAX_SHARDS:,})"
            )
        if count is not None and total != count:
            raise ShardRefused(
                f"--reasoning-shard auto/{count}: {source} counts {total} jobs, not {count}"
            )
        found.append(AutoShard(index0 + 1, total, source))
    if not found:
        raise ShardRefused(
            f"--reasoning-shard auto: no scheduler's variables are set (read: {VARIABLES}); "
            "give K/N instead"
        )
    first = found[0]
    for other in found[1:]:
        if (other.index, other.count) != (first.index, first.count):
            raise ShardRefused(
                f"--reasoning-shard auto: {first.source} says shard {first.index}/{first.count}"
                f" but {other.source} says {other.index}/{other.count}: give K/N instead"
            )
    if len(found) > 1:
        first = AutoShard(first.index, first.count, " and ".join(f.source for f in found))
    return first


def parse_shard(raw: str, env: Mapping[str, str]) -> tuple[int, int, AutoShard | None]:
    """``--reasoning-shard`` (or the ini key): ``K/N`` with 1 <= K <= N <= MAX_SHARDS, or
    ``auto`` / ``auto/N`` read from ``env`` (:func:`from_env`): (K, N, what auto read)."""
    from ..errors import clip, quote

    k, sep, n = str(raw).strip().partition("/")
    if k.strip().lower() == "auto":
        count = None
        if sep:
            text = n.strip()
            if not (text.isascii() and text.isdigit() and len(text) < 9) or not (
                1 <= int(text) <= MAX_SHARDS
            ):
                raise ShardRefused(
                    f"--reasoning-shard: expected auto or auto/N with 1 <= N <= {MAX_SHARDS:,} "
                    f"(N: a Kubernetes Indexed Job's completions), got {quote(raw)}"
                )
            count = int(text)
        auto = from_env(env, count)
        return auto.index, auto.count, auto
    try:
        shard = (int(k), int(n)) if len(k) + len(n) < 40 else None
    except ValueError:
        shard = None
    if not sep or shard is None or not 1 <= shard[0] <= shard[1]:
        raise ShardRefused(
            "--reasoning-shard: expected K/N with 1 <= K <= N (e.g. 2/4) or auto, got "
            f"{quote(raw)}"
        )
    if shard[1] > MAX_SHARDS:
        # Each shard is a CI job; N also sizes the assignment's tables before collection.
        raise ShardRefused(
            f"--reasoning-shard: at most {MAX_SHARDS:,} shards (a CI matrix job each), got "
            f"{clip(n.strip(), 30)}"
        )
    return shard[0], shard[1], None
