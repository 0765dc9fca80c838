"""What a sample's report carries from the process that answered it to the controller: one
typed :class:`SampleReport` (the scored outcome, its level as one :class:`LevelRef`, and
what the ledger needs to place it), built by the item that ran and read back by the
controller. xdist replays a worker's reports on the controller, so the report travels as one
JSON string in ``user_properties`` (:data:`PROPERTY`): :meth:`SampleReport.to_json` on one
side, :meth:`SampleReport.from_json` on the other, which checks every field (the outcome as a
results row is checked, ``gates.rows.check_row``) and says what is wrong in one line. The
JSON is also what JUnit XML shows under the ``reasoning`` property, so its shape is kept: the
results row, then the level's gate and the ledger's fields. The prompt, where the controller
files prompts, travels apart (:data:`PROMPT`), once per process and prompt."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..core import JSON, Outcome
from ..errors import ReasoningError, clip
from ..gates import GateRule, GateSpec
from ..gates.rows import check_row

__all__ = ["PROMPT", "PROPERTY", "LevelRef", "SampleReport", "UnreadableReport", "sent_prompt"]

PROPERTY = "reasoning"  # the user property that carries a sample's report
# The user property that carries the sample's prompt to the controller (for the prompts file
# beside the results file), sent once per prompt a process answers, only where the controller
# uses it (``RunState.sends_prompts``: a report, or a prompts file beside the results); taken
# off again before JUnit XML sees the properties.
PROMPT = "reasoning.prompt"


def sent_prompt(user_properties: Any) -> str | None:
    """The prompt a sample's call report carries, if any."""
    for name, value in user_properties:
        if name == PROMPT and isinstance(value, str):
            return value
    return None
_OUTCOME_FIELDS = frozenset(f.name for f in fields(Outcome))
_PLACE = ("suite", "entry", "level")


class UnreadableReport(ReasoningError):
    """A sample's report that is not one this plugin wrote: one line, what is wrong."""


@dataclass(frozen=True)
class LevelRef:
    """One model's level of one suite entry: the unit a gate decides, a sequential level
    settles, a shard keeps whole. The one way a level is named in the plugin."""

    model: str
    suite: str
    entry: str
    level: str

    @classmethod
    def of(cls, model: str, where: tuple[str, str, str]) -> LevelRef:
        """From the ledger's ``(model, (suite, entry, level))``."""
        return cls(model, *where)

    @property
    def where(self) -> tuple[str, str, str]:
        """(suite, entry, level), as the ledger and ``GateSpec.where`` have it."""
        return (self.suite, self.entry, self.level)

    @property
    def key(self) -> str:
        """As text (the signals' file names, the shards' groups): fields joined by ``\\x1f``."""
        return "\x1f".join((self.model, self.suite, self.entry, self.level))

    def gate(self, rule: GateRule) -> GateSpec:
        """The level's gate: where it lives and what it demands."""
        return GateSpec(self.suite, self.entry, self.level, rule)


@dataclass(frozen=True)
class SampleReport:
    """One answered sample and what the controller needs to count it: its level and rule
    (the gate), its verdict items' node ids, the level's size and the sample's place in it,
    the Holm family of its comparison; and what the answering process has to say (a notice
    printed once, its response cache failing)."""

    outcome: Outcome  # the results row (suite, entry and repeats filled in)
    level: LevelRef
    rule: GateRule
    size: int  # samples of the level
    position: int  # the sample's place in its level's collection order
    gate_id: str | None = None
    comparison_id: str | None = None
    family: int = 1  # levels of the candidate's comparisons (sequential early verdicts)
    notices: tuple[tuple[str, str], ...] = ()  # (kind, one line): a lost shared cache
    storage_error: str | None = None  # the answering process's cache failed

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    def to_dict(self) -> dict[str, JSON]:
        """The results row, then the envelope, in the order JUnit consumers have read it."""
        data = self.outcome.to_dict()
        if self.storage_error is not None:
            data["storage_error"] = self.storage_error
        if self.notices:
            data["notices"] = dict(self.notices)
        data["gate"] = self.level.gate(self.rule).to_dict()
        data["gate_id"] = self.gate_id
        data["comparison_id"] = self.comparison_id
        data["level_size"] = self.size
        data["position"] = self.position
        if self.comparison_id:
            data["family"] = self.family
        return data

    @classmethod
    def from_json(cls, text: str) -> SampleReport:
        """The report ``to_json`` wrote; anything else raises :class:`UnreadableReport` (one
        line: the field and what it holds)."""
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as exc:
            raise UnreadableReport(f"not JSON ({clip(str(exc), 80)})") from None
        try:
            return cls._from_dict(data)
        except (ValueError, TypeError) as exc:
            raise UnreadableReport(str(exc)) from None

    @classmethod
    def _from_dict(cls, data: Any) -> SampleReport:
        check_row(data)  # the outcome is a results row: every field a verdict reads, typed
        gate = data.get("gate")
        if not isinstance(gate, dict) or not all(isinstance(gate.get(k), str) for k in _PLACE):
            raise ValueError(f"gate: expected the level's suite, entry and level, got {gate!r:.60}")
        outcome = Outcome.from_dict({k: v for k, v in data.items() if k in _OUTCOME_FIELDS})
        level = LevelRef(outcome.model, gate["suite"], gate["entry"], gate["level"])
        if (outcome.suite, outcome.entry, outcome.level) != level.where:
            raise ValueError(f"gate: {level.where} is not the sample's level")
        notices = data.get("notices") or {}
        if not isinstance(notices, dict) or not all(isinstance(v, str) for v in notices.values()):
            raise ValueError(f"notices: expected kind → text, got {notices!r:.60}")
        storage_error = data.get("storage_error")
        if storage_error is not None and not isinstance(storage_error, str):
            raise ValueError(f"storage_error: expected text, got {storage_error!r:.60}")
        return cls(
            outcome,
            level,
            _rule(gate),
            size=_count(data, "level_size", 0),
            position=_count(data, "position", 0),
            gate_id=_node_id(data, "gate_id"),
            comparison_id=_node_id(data, "comparison_id"),
            family=_count(data, "family", 1, default=1),
            notices=tuple((str(k), v) for k, v in notices.items()),
            storage_error=storage_error,
        )

    @classmethod
    def read(cls, user_properties: Any) -> SampleReport | None:
        """The sample report among a test report's ``user_properties``; None for a test
        that is no sample of ours."""
        for name, value in user_properties:
            if name == PROPERTY and isinstance(value, str):
                read = _LAST_READ.get(value)
                if read is None:
                    read = cls.from_json(value)
                    _LAST_READ.clear()
                    _LAST_READ[value] = read
                return read
        return None


# The last report read, by its text: each call report is read twice (its status letter,
# ``items.teststatus``, then the controller), and reading (``check_row``) is pure, so the
# second is the first's value, its checks included. Only the pytest main thread reads.
_LAST_READ: dict[str, SampleReport] = {}


def _rule(gate: Mapping[str, Any]) -> GateRule:
    """The gate's rule, each key of its default's kind: true/false, text, a number (or null
    where the default is null)."""
    for f in fields(GateRule):
        if f.name not in gate:
            continue
        value, default = gate[f.name], f.default
        if isinstance(default, bool | str):
            fits = type(value) is type(default)
        elif default is None or isinstance(default, int | float):
            number = isinstance(value, int | float) and not isinstance(value, bool)
            fits = number or (default is None and value is None)
        else:  # a kind of field this check does not know: GateRule takes it as it is
            fits = True
        if not fits:
            raise ValueError(f"gate: {f.name}: expected the kind of {default!r}, got {value!r:.60}")
    return GateRule.from_dict(dict(gate))


def _count(data: Mapping[str, Any], name: str, low: int, default: int | None = None) -> int:
    value = data.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {value!r:.60}")
    return value


def _node_id(data: Mapping[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{name}: expected a node id or null, got {value!r:.60}")
    return value
