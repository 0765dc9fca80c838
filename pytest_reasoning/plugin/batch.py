"""``--reasoning-batch``: before the run loop, the selected items' requests that have no cached
answer go to their providers' Batch API (``models/batch.py``); the answers land in the
response cache, and the run that follows answers every item from it. A progress line shows
while the batches run (on a terminal, not under ``-q``); a batch phase that cannot finish
stops the run in one line (exit 4 before anything was paid, else 2: the batch stays
recorded and the same command picks it up).

What the batches billed is the run's spend (the controller's ``Spend``: the spend line, the
budget); under ``--reasoning-budget`` only what the budget can pay for is submitted, and a
request left out stops the run like a live call that reached the budget (the rest is not
asked, exit 2)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import TYPE_CHECKING, Any

import pytest

from ..errors import ReasoningError, StorageFailed, printable
from ..models.base import ChatRequest
from ..models.batch import (
    FOLDER,
    BatchFailed,
    BatchJob,
    BatchLedger,
    BatchProgress,
    BatchPurse,
    BatchResult,
    BatchTimedOut,
    run_batches,
)
from .progress import EVERY_S, LiveCount
from .state import RunState

if TYPE_CHECKING:
    from .controller import Controller
    from .items import ReasoningItem

__all__ = ["run_batch_phase"]


def run_batch_phase(
    state: RunState, controller: Controller | None, samples: list[ReasoningItem]
) -> None:
    """Answer the uncached requests of the run's ``samples`` through the Batch API (the
    bill lands in the ``controller``'s spend), or stop the run."""
    config = state.config
    tr = config.pluginmanager.getplugin("terminalreporter")
    jobs, sequential = _jobs(state, samples)
    if sequential:
        _say(
            tr,
            f"reasoning: batch: {sequential} samples of sequential levels are asked live, in "
            "order (a batch cannot stop early)",
        )
    if not jobs:
        if any(state.evaluator.model(m).calls_model for m in state.models):
            _say(tr, "reasoning: batch: every answer is in the cache, nothing to submit")
        return
    asked = sum(len(j.requests) for j in jobs)
    _say(tr, f"reasoning: batch: {asked} requests without a cached answer, to the Batch API")
    assert state.options.cache_dir is not None  # refused at start otherwise
    ledger = BatchLedger(state.options.cache_dir / FOLDER)
    progress = BatchProgress()
    cache = state.evaluator.cache
    assert cache is not None and controller is not None  # the controller's process, no -n
    purse = BatchPurse(state.options.budget, controller.spend)  # the bill lands in its spend
    wait_s = state.options.batch_wait_s
    future = _start(
        run_batches(jobs, cache, ledger, wait_s=wait_s, progress=progress, purse=purse)
    )
    live = tr is not None and LiveCount.wanted(config)
    while not concurrent.futures.wait([future], timeout=EVERY_S).done:
        if live:
            tr.rewrite(printable(f"reasoning: batch: {progress.line()}"), erase=True)
    if live:
        tr.rewrite("", erase=True)
        tr.write("\r")
    try:
        results = future.result()
    # The endpoint's words (batch ids, refusals) are shown, never obeyed (errors.printable).
    except (BatchFailed, BatchTimedOut, StorageFailed) as exc:
        _spent(tr, state, controller)
        pytest.exit(printable(str(exc)), returncode=pytest.ExitCode.INTERRUPTED)
    except ReasoningError as exc:  # no batch API, a refused batch, a key not set: nothing paid
        _spent(tr, state, controller)  # (by this batch: another model's may have been collected)
        pytest.exit(printable(str(exc)), returncode=pytest.ExitCode.USAGE_ERROR)
    for result in results:
        _say(tr, _summary(result))
    controller.batch_billed(purse.refusal())


def _jobs(state: RunState, samples: list[ReasoningItem]) -> tuple[list[BatchJob], int]:
    """Per model that calls, its selected items' requests without a cached answer (each
    request once), in collection order; and how many samples of sequential levels were left
    to the run (it stops asking a level once its verdict is settled)."""
    evaluator = state.evaluator
    cache = evaluator.cache
    wanted: dict[str, dict[str, ChatRequest]] = {}
    sequential = 0
    for item in samples:
        if not evaluator.model(item.model).calls_model:
            continue
        if item.sequential:
            sequential += 1
            continue
        request = evaluator.request_for(item.address.make_item(), item.model, item.address.repeat)
        mine = wanted.setdefault(item.model, {})
        if request.key not in mine and (cache is None or cache.get(request) is None):
            mine[request.key] = request
    jobs = []
    for model, requests in wanted.items():
        client = evaluator.batch_client(model)  # None: its kind has no Batch API
        if requests and client is not None:
            jobs.append(BatchJob(model, client, list(requests.values())))
    return jobs, sequential


def _start(coro: Any) -> concurrent.futures.Future[list[BatchResult]]:
    """Run the batches on a daemon thread of their own: Ctrl-C ends the run at once, and the
    submitted batches stay recorded for the next one."""
    future: concurrent.futures.Future[list[BatchResult]] = concurrent.futures.Future()

    def run() -> None:
        try:
            future.set_result(asyncio.run(coro))
        except BaseException as exc:  # handed to the waiting thread
            future.set_exception(exc)

    threading.Thread(target=run, name="reasoning-batch", daemon=True).start()
    return future


def _summary(result: BatchResult) -> str:
    done = [
        *(f"{b} submitted" for b in result.submitted),
        *(f"{b} picked up" for b in result.picked_up),
    ]
    text = f"reasoning: batch: {result.label}: {result.answered}/{result.asked} answered"
    text += f" ({', '.join(done)})" if done else ""
    if result.left:
        why = next(iter(result.left.values()))
        text += f"; {len(result.left)} left to live calls (e.g. {why})"
    if result.refused:
        text += f"; {result.refused} not submitted (the budget cannot pay for them)"
    return text


def _spent(tr: Any, state: RunState, controller: Controller) -> None:
    """The spend line of a run the batch phase stops (no summary follows): what the batches
    collected before it billed."""
    line = controller.spend.line(state.options.budget)
    if line:
        _say(tr, f"reasoning: {line}")


def _say(tr: Any, line: str) -> None:
    if tr is not None:
        tr.write_line(printable(line))
